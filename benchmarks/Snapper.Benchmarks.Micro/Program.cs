using BenchmarkDotNet.Running;

// dotnet run -c Release --project benchmarks/Snapper.Benchmarks.Micro -- --filter '*' [--job short]
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
