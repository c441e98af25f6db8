namespace EventSourcing.Runtime.Execution;

/// <summary>Thrown out of serialization when the state cannot fit under the cap; <see cref="BytesSoFar"/> were written.</summary>
public sealed class StateTooLargeException(int bytesSoFar) : Exception("state over the size limit")
{
    public int BytesSoFar { get; } = bytesSoFar;
}
