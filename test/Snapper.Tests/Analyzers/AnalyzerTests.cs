using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Text;
using Snapper.Analyzers;
using Snapper.Analyzers.CodeFixes;
using Xunit;

namespace Snapper.Tests.Analyzers;

/// <summary>
/// Snapper's analyzers on small sources compiled against the real Snapper and Orleans assemblies: each rule reports
/// what it should, where it should, and nothing on the correct forms beside it.
/// </summary>
public sealed class AnalyzerTests
{
    private const string Header = """
        using System.Threading.Tasks;
        using Orleans;
        using Snapper;

        public sealed class Item { public int Count { get; set; } }

        public interface IPlain : IGrainWithIntegerKey { Task Ping(); }

        """;

    [Fact]
    public async Task Snap001_reports_interface_methods_without_the_transactional_shape()
    {
        var diagnostics = await AnalyzeAsync(new MethodShapeAnalyzer(), """
            public interface IShop : ITransactionalActor, IGrainWithIntegerKey
            {
                Task Buy(TxnContext ctx, int item);
                Task<int> Count(TxnContext ctx, int unused);
                Task NoContext(int item);
                int NotATask(TxnContext ctx, int item);
                Task TwoInputs(TxnContext ctx, int a, int b);
            }

            public interface IDerived : IShop { Task<string> Name(TxnContext ctx, int unused); Task Bare(); }
            """);

        Assert.Equal(["IShop.NoContext", "IShop.NotATask", "IShop.TwoInputs", "IDerived.Bare"], Messages(diagnostics, "SNAP001").Select(m => m.Split('\'')[1]));
        Assert.Contains("Task NoContext(TxnContext ctx, TInput input)", Messages(diagnostics, "SNAP001")[0]);
    }

    [Fact]
    public async Task Snap002_reports_dropped_call_and_state_tasks_and_the_fix_awaits_them()
    {
        var source = """
            public interface IShop : ITransactionalActor, IGrainWithIntegerKey { Task Buy(TxnContext ctx, int item); }

            public sealed class Shop : TransactionalActor<Item>, IShop
            {
                public async Task Buy(TxnContext ctx, int item)
                {
                    var other = GrainFactory.GetGrain<IShop>(item);
                    CallActor(ctx, other.Buy, 1);
                    _ = GetState(ctx, AccessMode.Read);
                    var kept = CallActor(ctx, other.Buy, 2);
                    await Task.WhenAll(kept, CallActor(ctx, other.Buy, 3));
                    var state = await GetState(ctx, AccessMode.ReadWrite);
                    state.Count++;
                }
            }
            """;
        var diagnostics = await AnalyzeAsync(new UnawaitedCallAnalyzer(), source);
        Assert.Equal([8, 9], Lines(diagnostics, "SNAP002"));
        Assert.Contains("The task of 'CallActor' is dropped", Messages(diagnostics, "SNAP002")[0]);

        var fixedSource = await FixAllAsync(source, new UnawaitedCallAnalyzer(), new UnawaitedCallCodeFix());
        Assert.Contains("await CallActor(ctx, other.Buy, 1);", fixedSource);
        Assert.Contains("_ = await GetState(ctx, AccessMode.Read);", fixedSource);
        Assert.Empty(Lines(await AnalyzeAsync(new UnawaitedCallAnalyzer(), fixedSource, withHeader: false), "SNAP002"));
    }

    [Fact]
    public async Task Snap003_reports_start_txn_with_a_method_of_another_actor()
    {
        var diagnostics = await AnalyzeAsync(new StartTxnTargetAnalyzer(), """
            public interface IShop : ITransactionalActor, IGrainWithIntegerKey { Task Buy(TxnContext ctx, int item); }

            public static class Client
            {
                public static async Task Run(IGrainFactory grains, IShop field)
                {
                    var a = grains.GetGrain<IShop>(1);
                    var b = grains.GetGrain<IShop>(2);
                    await a.StartTxn(a.Buy, 1);
                    await a.StartTxn(b.Buy, 1);
                    await field.StartTxn(field.Buy, 1, ActorAccessInfo.Of(field));
                    await grains.GetGrain<IShop>(3).StartTxn(grains.GetGrain<IShop>(3).Buy, 1);
                    await grains.GetGrain<IShop>(3).StartTxn(grains.GetGrain<IShop>(4).Buy, 1);
                }
            }
            """);

        Assert.Equal([10, 13], Lines(diagnostics, "SNAP003"));
        Assert.Contains("started on 'a' but names a method of 'b'", Messages(diagnostics, "SNAP003")[0]);
    }

    [Fact]
    public async Task Snap004_reports_pact_declarations_of_grains_that_are_not_transactional_actors()
    {
        var diagnostics = await AnalyzeAsync(new DeclaredActorAnalyzer(), """
            public interface IShop : ITransactionalActor, IGrainWithIntegerKey { Task Buy(TxnContext ctx, int item); }

            public static class Client
            {
                public static ActorAccessInfo Declare(IGrainFactory grains, Orleans.Runtime.IAddressable unknown)
                {
                    var shop = grains.GetGrain<IShop>(1);
                    var plain = grains.GetGrain<IPlain>(1);
                    var info = ActorAccessInfo.Of(shop, plain, unknown);
                    info.Add(plain);
                    return info.AddKeys(plain, 1, 2).AddKeys(shop, 3);
                }
            }
            """);

        Assert.Equal([9, 10, 11], Lines(diagnostics, "SNAP004"));
        Assert.Contains("'plain' is a 'IPlain', which is not a transactional actor", Messages(diagnostics, "SNAP004")[0]);
    }

    private static async Task<ImmutableArray<Diagnostic>> AnalyzeAsync(DiagnosticAnalyzer analyzer, string source, bool withHeader = true)
    {
        var compilation = Compile(withHeader ? Header + source : source);
        Assert.Empty(compilation.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).Select(d => d.ToString()));
        return await compilation.WithAnalyzers([analyzer]).GetAnalyzerDiagnosticsAsync();
    }

    // Lines are counted in the test's source, after the header.
    private static int[] Lines(ImmutableArray<Diagnostic> diagnostics, string id) =>
        [.. diagnostics.Where(d => d.Id == id).Select(d => d.Location.GetLineSpan().StartLinePosition.Line + 1 - HeaderLines).Order()];

    private static string[] Messages(ImmutableArray<Diagnostic> diagnostics, string id) =>
        [.. diagnostics.Where(d => d.Id == id).OrderBy(d => d.Location.SourceSpan.Start).Select(d => d.GetMessage())];

    private static int HeaderLines => Header.Split('\n').Length - 1;

    private static CSharpCompilation Compile(string source) => CSharpCompilation.Create(
        "AnalyzerProbe",
        [CSharpSyntaxTree.ParseText(source)],
        References.Value,
        new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable));

    private static readonly Lazy<MetadataReference[]> References = new(() =>
    {
        // The runtime's assemblies and everything this test process loaded (Snapper, Orleans), each once.
        _ = typeof(TransactionalActor<>);
        var platform = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator);
        var loaded = AppDomain.CurrentDomain.GetAssemblies().Where(a => !a.IsDynamic && a.Location.Length > 0).Select(a => a.Location);
        return [.. platform.Concat(loaded).GroupBy(Path.GetFileName).Select(g => MetadataReference.CreateFromFile(g.First()))];
    });

    /// <summary>Applies <paramref name="fix"/> to every diagnostic of <paramref name="analyzer"/> in turn; returns the new source.</summary>
    private static async Task<string> FixAllAsync(string source, DiagnosticAnalyzer analyzer, CodeFixProvider fix)
    {
        using var workspace = new AdhocWorkspace();
        var project = workspace.AddProject("AnalyzerProbe", LanguageNames.CSharp)
            .WithCompilationOptions(new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable))
            .WithMetadataReferences(References.Value);
        var document = project.AddDocument("Probe.cs", SourceText.From(Header + source));
        for (var round = 0; round < 10; round++)
        {
            var compilation = (await document.Project.GetCompilationAsync())!;
            var diagnostic = (await compilation.WithAnalyzers([analyzer]).GetAnalyzerDiagnosticsAsync()).FirstOrDefault(d => fix.FixableDiagnosticIds.Contains(d.Id));
            if (diagnostic is null)
            {
                break;
            }

            CodeAction? action = null;
            await fix.RegisterCodeFixesAsync(new CodeFixContext(document, diagnostic, (registered, _) => action ??= registered, CancellationToken.None));
            Assert.NotNull(action);
            var operations = await action.GetOperationsAsync(CancellationToken.None);
            document = operations.OfType<ApplyChangesOperation>().Single().ChangedSolution.GetDocument(document.Id)!;
        }

        return (await document.GetTextAsync()).ToString();
    }
}
