using System.Linq.Expressions;
using System.Reflection;

namespace Snapper.Actors;

/// <summary>
/// The transactional methods of one actor class, found once per class: every method of an interface that
/// derives from <see cref="ITransactionalActor"/> with the shape <c>Task M(TxnContext, TInput)</c> or
/// <c>Task&lt;TResult&gt; M(TxnContext, TInput)</c>. Each is called through a compiled delegate, so a
/// call costs a dictionary lookup and a type check, not reflection.
/// </summary>
internal sealed class TransactionalMethodTable
{
    private readonly Dictionary<string, TransactionalMethodInvoker> _methods;
    private readonly string _actorType;

    private TransactionalMethodTable(Type actorType, Dictionary<string, TransactionalMethodInvoker> methods)
    {
        _actorType = actorType.FullName ?? actorType.Name;
        _methods = methods;
    }

    /// <summary>The method called <paramref name="name"/>, after checking that <paramref name="input"/> fits it.</summary>
    /// <exception cref="TransactionalMethodNotFoundException">No transactional method has that name.</exception>
    /// <exception cref="TransactionInputException">The input's type does not fit.</exception>
    public TransactionalMethodInvoker Resolve(string name, object? input)
    {
        if (!_methods.TryGetValue(name, out var method))
        {
            throw new TransactionalMethodNotFoundException(_actorType, name);
        }

        method.CheckInput(input);
        return method;
    }

    /// <summary>The names of all transactional methods.</summary>
    public IReadOnlyCollection<string> Names => _methods.Keys;

    /// <summary>Builds the table of <paramref name="actorType"/>, a class that can be activated (not an open generic one).</summary>
    /// <exception cref="DuplicateTransactionalMethodException">Two of its transactional methods share a name.</exception>
    public static TransactionalMethodTable Build(Type actorType)
    {
        var nullability = new NullabilityInfoContext();
        var methods = new Dictionary<string, TransactionalMethodInvoker>(StringComparer.Ordinal);
        foreach (var method in FindMethods(actorType))
        {
            methods.Add(method.Name, TransactionalMethodInvoker.Create(method, nullability));
        }

        return new TransactionalMethodTable(actorType, methods);
    }

    /// <summary>
    /// The table of the methods of one interface of Snapper's own (not a transactional interface, so that no user
    /// table lists them), for calls Snapper makes internally (<c>CallRequest.Internal</c>).
    /// </summary>
    public static TransactionalMethodTable ForInternalInterface(Type iface)
    {
        var nullability = new NullabilityInfoContext();
        return new TransactionalMethodTable(iface, iface.GetMethods().Where(IsTransactionalShape)
            .ToDictionary(m => m.Name, m => TransactionalMethodInvoker.Create(m, nullability), StringComparer.Ordinal));
    }

    /// <summary>
    /// The transactional methods of <paramref name="actorType"/>, after checking that no two share a name. Nothing is
    /// compiled, so this works on open generic classes too: the silo checks those before any is constructed.
    /// </summary>
    /// <exception cref="DuplicateTransactionalMethodException">Two of its transactional methods share a name.</exception>
    public static IReadOnlyList<MethodInfo> FindMethods(Type actorType)
    {
        var byName = new Dictionary<string, MethodInfo>(StringComparer.Ordinal);
        foreach (var iface in actorType.GetInterfaces().Where(TransactionalMethod.IsTransactionalInterface))
        {
            foreach (var method in iface.GetMethods().Where(IsTransactionalShape))
            {
                // Names are what travels on the wire (TransactionalMethod.NameOf): two methods with one name could not
                // be told apart. The same method met twice (an interface listed by two paths) is no conflict.
                if (byName.TryGetValue(method.Name, out var existing) && existing != method)
                {
                    throw new DuplicateTransactionalMethodException(QualifiedName(actorType), method.Name, Describe(existing), Describe(method));
                }

                byName[method.Name] = method;
            }
        }

        return [.. byName.Values];
    }

    /// <summary>A method as a reader finds it in the source: <c>Task&lt;Int32&gt; Ns.IAccount.Deposit(TxnContext, Decimal)</c>.</summary>
    private static string Describe(MethodInfo method) =>
        $"{ShortName(method.ReturnType)} {QualifiedName(method.DeclaringType!)}.{method.Name}" +
        $"({string.Join(", ", method.GetParameters().Select(p => ShortName(p.ParameterType)))})";

    private static string QualifiedName(Type type) =>
        type.IsNested ? $"{QualifiedName(type.DeclaringType!)}.{ShortName(type)}"
        : type.Namespace is { } space ? $"{space}.{ShortName(type)}"
        : ShortName(type);

    /// <summary>The type's name with generic arguments written out (<c>Task&lt;Int32&gt;</c>, not <c>Task`1</c>).</summary>
    private static string ShortName(Type type)
    {
        if (!type.IsGenericType)
        {
            return type.Name;
        }

        var name = type.Name;
        var tick = name.IndexOf('`', StringComparison.Ordinal);
        return $"{(tick < 0 ? name : name[..tick])}<{string.Join(", ", type.GetGenericArguments().Select(ShortName))}>";
    }

    private static bool IsTransactionalShape(MethodInfo method)
    {
        var parameters = method.GetParameters();
        if (parameters.Length != 2 || parameters[0].ParameterType != typeof(TxnContext) || method.IsGenericMethodDefinition)
        {
            return false;
        }

        var returns = method.ReturnType;
        return returns == typeof(Task) || (returns.IsGenericType && returns.GetGenericTypeDefinition() == typeof(Task<>));
    }
}

/// <summary>One transactional method: its input contract and a compiled call.</summary>
internal sealed class TransactionalMethodInvoker
{
    private readonly Func<object, TxnContext, object?, Task> _start;
    private readonly Func<Task, object?>? _resultOf;
    private readonly Type _inputType;
    private readonly bool _acceptsNull;

    private TransactionalMethodInvoker(
        MethodInfo method, Type inputType, bool acceptsNull, Func<object, TxnContext, object?, Task> start, Func<Task, object?>? resultOf)
    {
        Method = method;
        _inputType = inputType;
        _acceptsNull = acceptsNull;
        _start = start;
        _resultOf = resultOf;
    }

    public MethodInfo Method { get; }

    /// <summary>
    /// Calls the method and returns its own task, so that a caller that has to wait for it awaits it directly, with no
    /// state machine in between (a PACT's first actor, see <c>TransactionalActor.RunPactAsync</c>). May throw, as the
    /// method may before it returns a task, and throws for a method that returned no task at all.
    /// </summary>
    public Task Start(object actor, TxnContext context, object? input) =>
        _start(actor, context, input)
        ?? throw new InvalidOperationException($"{Method.DeclaringType?.Name}.{Method.Name} returned null instead of a task.");

    /// <summary>The result of a task <see cref="Start"/> returned, once it completed successfully (null for a method returning Task).</summary>
    public object? ResultOf(Task completed) => _resultOf?.Invoke(completed);

    /// <summary>
    /// Calls the method and gives its result as an object. A method that finished before returning its task (a callee's
    /// method, as a rule) costs no state machine and no task here; only one that is still running is awaited.
    /// </summary>
    public ValueTask<object?> Invoke(object actor, TxnContext context, object? input)
    {
        var task = Start(actor, context, input);
        return task.IsCompletedSuccessfully ? new(ResultOf(task)) : AwaitAsync(task);
    }

    public void CheckInput(object? input)
    {
        if (input is null ? !_acceptsNull : !_inputType.IsInstanceOfType(input))
        {
            throw new TransactionInputException(Method.Name, _inputType.FullName ?? _inputType.Name, input?.GetType().FullName);
        }
    }

    public static TransactionalMethodInvoker Create(MethodInfo method, NullabilityInfoContext nullability)
    {
        var inputParameter = method.GetParameters()[1];
        var inputType = inputParameter.ParameterType;
        var acceptsNull = inputType.IsValueType
            ? Nullable.GetUnderlyingType(inputType) is not null
            : nullability.Create(inputParameter).WriteState != NullabilityState.NotNull;

        // (actor, ctx, input) => (Task)((IFace)actor).M(ctx, (TInput)input)
        var actor = Expression.Parameter(typeof(object), "actor");
        var context = Expression.Parameter(typeof(TxnContext), "ctx");
        var input = Expression.Parameter(typeof(object), "input");
        var call = Expression.Call(
            Expression.Convert(actor, method.DeclaringType!),
            method,
            context,
            Expression.Convert(input, inputType));
        var start = Expression.Lambda<Func<object, TxnContext, object?, Task>>(Expression.Convert(call, typeof(Task)), actor, context, input).Compile();
        var resultOf = method.ReturnType == typeof(Task)
            ? null
            : typeof(TransactionalMethodInvoker).GetMethod(nameof(ResultOfTask), BindingFlags.NonPublic | BindingFlags.Static)!
                .MakeGenericMethod(method.ReturnType.GetGenericArguments()[0])
                .CreateDelegate<Func<Task, object?>>();
        return new TransactionalMethodInvoker(method, inputType, acceptsNull, start, resultOf);
    }

    private static object? ResultOfTask<T>(Task completed) => ((Task<T>)completed).Result;

    private async ValueTask<object?> AwaitAsync(Task task)
    {
        await task;
        return ResultOf(task);
    }
}
