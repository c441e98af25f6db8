namespace EventSourcing.Runtime.Execution;

/// <summary>Defaults when a request does not name the limits (the TypeScript side always does).</summary>
public static class ResultLimits
{
    public const int DefaultMaxStateBytes = 1 << 20;
    public const int DefaultMaxKeyLength = 1024;
    public const int DefaultMaxResultBytes = 32 << 20;
}
