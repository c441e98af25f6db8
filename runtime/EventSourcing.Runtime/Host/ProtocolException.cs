namespace EventSourcing.Runtime.Host;

/// <summary>Thrown by handlers to answer with an error envelope.</summary>
public sealed class ProtocolException(string code, string message) : Exception(message)
{
    public string Code { get; } = code;
}
