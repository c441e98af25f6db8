namespace EventSourcing.Runtime.Compilation;

/// <summary>A verdict with the reason shown to the tenant when the access is refused.</summary>
public readonly record struct ApiVerdict(ApiAccess Access, string? Reason)
{
    public static readonly ApiVerdict Allow = new(ApiAccess.Allowed, null);
    public static ApiVerdict Deny(string reason) => new(ApiAccess.Denied, reason);
    public static ApiVerdict CompilerOnly(string reason) => new(ApiAccess.CompilerOnly, reason);
}
