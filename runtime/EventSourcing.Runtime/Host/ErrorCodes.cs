namespace EventSourcing.Runtime.Host;

/// <summary>Error codes of error responses and of per-item errors (see runtime/protocol.json).</summary>
public static class ErrorCodes
{
    public const string BadRequest = "BAD_REQUEST";
    public const string UnknownType = "UNKNOWN_TYPE";
    public const string UnsupportedInMode = "UNSUPPORTED_IN_MODE";
    public const string AssemblyNotLoaded = "ASSEMBLY_NOT_LOADED";
    public const string AlreadyLoaded = "ALREADY_LOADED";
    public const string VerifyFailed = "VERIFY_FAILED";
    public const string LoadFailed = "LOAD_FAILED";
    public const string ClassNotFound = "CLASS_NOT_FOUND";
    public const string NotAProjection = "NOT_A_PROJECTION";
    public const string Internal = "INTERNAL";
    public const string TenantMemoryExceeded = "TENANT_MEMORY_EXCEEDED";
    public const string HostMemoryExhausted = "HOST_MEMORY_EXHAUSTED";

    // Per-group / per-event errors inside apply and resolveKeys results.
    public const string ApplyFailed = "APPLY_FAILED";
    public const string ResolveFailed = "RESOLVE_FAILED";
    public const string InvalidEvent = "INVALID_EVENT";
    public const string StateDeserializationFailed = "STATE_DESERIALIZATION_FAILED";
    public const string StateSerializationFailed = "STATE_SERIALIZATION_FAILED";
    public const string StateTooLarge = "STATE_TOO_LARGE";
    public const string KeyTooLong = "KEY_TOO_LONG";

    public static readonly string[] ResponseCodes =
    {
        BadRequest, UnknownType, UnsupportedInMode, AssemblyNotLoaded, AlreadyLoaded, VerifyFailed, LoadFailed,
        ClassNotFound, NotAProjection, Internal, TenantMemoryExceeded, HostMemoryExhausted,
    };

    public static readonly string[] ItemCodes =
    {
        ApplyFailed, ResolveFailed, InvalidEvent, StateDeserializationFailed, StateSerializationFailed, StateTooLarge, KeyTooLong,
    };
}
