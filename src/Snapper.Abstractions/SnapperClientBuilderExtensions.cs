using Microsoft.Extensions.DependencyInjection;
using Orleans.Serialization;

namespace Snapper;

/// <summary>Prepares an Orleans client to submit Snapper transactions.</summary>
public static class SnapperClientBuilderExtensions
{
    /// <summary>
    /// Registers Snapper's message and exception types with the client's serializer, so that results and
    /// <see cref="TransactionAbortedException"/> arrive typed.
    /// </summary>
    public static IClientBuilder AddSnapperClient(this IClientBuilder builder)
    {
        builder.Services.AddSerializer(serializer => serializer.AddAssembly(typeof(TxnContext).Assembly));
        return builder;
    }
}
