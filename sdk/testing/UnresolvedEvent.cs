namespace EventSourcing.Testing
{
    /// <summary>An event the service would hold in the projection's <c>!unresolved</c> lane instead of applying it:
    /// its key(s) could not be resolved or stored, or a new key would pass the tenant's <c>keysPerProjection</c>.
    /// None of its keys' states gets it (an event of several keys is held whole); the events after it go on.</summary>
    public sealed class UnresolvedEvent
    {
        internal UnresolvedEvent(Event e, string code, string message)
        {
            Event = e;
            Code = code;
            Message = message;
        }

        /// <summary>The held event.</summary>
        public Event Event { get; }

        /// <summary>Why, as the held lane says it: <c>RESOLVE_FAILED</c> (ResolveKey(s) threw, returned a null key or
        /// more than 1,024 keys), <c>KEY_TOO_LONG</c> (over 1,024 bytes of UTF-8), <c>INVALID_KEY</c> (empty,
        /// <c>!unresolved</c>, control characters, a lone surrogate) or <c>KEY_LIMIT</c>.</summary>
        public string Code { get; }

        /// <summary>The details.</summary>
        public string Message { get; }

        /// <inheritdoc />
        public override string ToString() => $"{Event}: {Code}: {Message}";
    }
}
