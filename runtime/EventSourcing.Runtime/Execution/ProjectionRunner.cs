using System.Text.Json;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

public sealed class ProjectionRunner<TProjection, TState> : RunnerBase<TState>, IRunner
    where TProjection : IProjection<TState>, new()
    where TState : new()
{
    public ProjectionRunner(JsonSerializerOptions options) : base(options)
    {
    }

    public Type ImplementationType => typeof(TProjection);
    public bool CanResolveKeys => true;

    protected override object NewInstance() => new TProjection();

    protected override TState ApplyOne(object instance, TState state, Event e) => ((TProjection)instance).Apply(state, e);

    public void ResolveKeys(JsonElement events, Utf8JsonWriter writer, int maxKeyLength)
    {
        // Judged out of the loop's frame, where the projection instance is no longer reachable (TenantMemory.HeldElsewhere).
        if (ResolveEach(events, writer, maxKeyLength) is { } oom && TenantMemory.HeldElsewhere(oom) is { } exhausted) throw exhausted;
    }

    /// <summary>Returns the first OutOfMemoryException a ResolveKey threw (that event answered RESOLVE_FAILED), if any.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    OutOfMemoryException? ResolveEach(JsonElement events, Utf8JsonWriter w, int maxKeyLength)
    {
        if (events.ValueKind != JsonValueKind.Array) throw new ProtocolException(ErrorCodes.BadRequest, "events must be an array");
        OutOfMemoryException? oom = null;
        var projection = new TProjection();
        foreach (var eventElement in events.EnumerateArray())
        {
            Event e;
            try
            {
                e = EventReader.Read(eventElement, Options);
            }
            catch (Exception ex)
            {
                w.WriteStartObject();
                WriteError(w, ErrorCodes.InvalidEvent, ex);
                w.WriteEndObject();
                continue;
            }
            try
            {
                var key = projection.ResolveKey(e);
                if (key is null) w.WriteNullValue();
                else if (key.Length <= maxKeyLength) w.WriteStringValue(key);
                else
                {
                    // Refused here, before the key is written: one event's 10 MB key must not make the
                    // whole batch's response too large to read.
                    w.WriteStartObject();
                    WriteLimitError(w, ErrorCodes.KeyTooLong, $"ResolveKey returned a key of {key.Length:N0} characters; the limit is {maxKeyLength:N0}", maxKeyLength);
                    w.WriteEndObject();
                }
            }
            catch (Exception ex)
            {
                oom ??= ex as OutOfMemoryException;
                w.WriteStartObject();
                WriteError(w, ErrorCodes.ResolveFailed, ex);
                w.WriteEndObject();
            }
        }
        return oom;
    }
}
