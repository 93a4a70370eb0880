namespace Snapper;

/// <summary>The input given for a transactional method is of the wrong type, or null where the method does not accept null.</summary>
[GenerateSerializer, Alias("snapper.input")]
public sealed class TransactionInputException : SnapperException
{
    /// <summary>Creates the exception.</summary>
    public TransactionInputException(string method, string expectedType, string? actualType)
        : base(actualType is null
            ? $"Method '{method}' takes a non-null {expectedType}; the input was null."
            : $"Method '{method}' takes {expectedType}; the input was {actualType}.")
    {
        Method = method;
        ExpectedType = expectedType;
        ActualType = actualType;
    }

    /// <summary>Creates the exception for an argument other than the method's input, such as a PACT's access declaration.</summary>
    public TransactionInputException(string method, string problem)
        : base($"Method '{method}': {problem}")
    {
        Method = method;
        ExpectedType = "";
    }

    /// <summary>The method that was called.</summary>
    [Id(0)] public string Method { get; private set; }

    /// <summary>The input type the method declares (empty when the problem is not the input's type).</summary>
    [Id(1)] public string ExpectedType { get; private set; }

    /// <summary>The type of the input given, or null when the input was null.</summary>
    [Id(2)] public string? ActualType { get; private set; }
}
