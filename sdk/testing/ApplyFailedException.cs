using System;

namespace EventSourcing.Testing
{
    /// <summary>An event the host would have failed: <see cref="Code"/> is the host's error code (<c>APPLY_FAILED</c>,
    /// <c>STATE_SERIALIZATION_FAILED</c>, <c>STATE_DESERIALIZATION_FAILED</c>), the inner exception what the tenant
    /// code threw.</summary>
    public sealed class ApplyFailedException : Exception
    {
        /// <summary>Creates the exception.</summary>
        public ApplyFailedException(string code, Event? failedEvent, Exception inner)
            : base($"{code}: {(failedEvent is null ? "before the first event" : failedEvent.ToString())}: {inner.GetType().FullName}: {inner.Message}", inner)
        {
            Code = code;
            FailedEvent = failedEvent;
        }

        /// <summary>The host's error code.</summary>
        public string Code { get; }

        /// <summary>The event that failed, or <c>null</c> when the stored state could not be read.</summary>
        public Event? FailedEvent { get; }
    }
}
