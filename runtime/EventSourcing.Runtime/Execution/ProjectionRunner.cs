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

    /// <summary>A lane's group carries its key: an IResolveKeys projection is applied with it; others (and calls without a key) as before.</summary>
    protected override TState ApplyOne(object instance, TState state, Event e, string? key) =>
        key is not null && instance is IResolveKeys<TState> keyed ? keyed.Apply(key, state, e) : ((TProjection)instance).Apply(state, e);

    protected override bool RefusesNullState => true;

    /// <summary>An IDeletableProjection decides after each Apply whether its key's state is removed (written as JSON null).</summary>
    protected override bool ShouldDelete(object instance, TState state, Event e) =>
        instance is IDeletableProjection<TState> deletable && deletable.ShouldDelete(state, e);

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
                if (projection is IResolveKeys<TState> multi)
                {
                    WriteKeys(w, CollectKeys(multi.ResolveKeys(e)), maxKeyLength);
                    continue;
                }
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

    /// <summary>
    /// Copies what ResolveKeys returned (tenant code: its list may be any IReadOnlyList) before anything is written,
    /// so a throw midway leaves no half-written array: null or empty → no keys; past MaxKeysPerEvent or a null key throws.
    /// </summary>
    static string[] CollectKeys(IReadOnlyList<string>? keys)
    {
        if (keys is null) return [];
        var count = keys.Count;
        if (count > MaxKeysPerEvent)
            throw new InvalidOperationException($"ResolveKeys returned {count:N0} keys for one event; the limit is {MaxKeysPerEvent:N0}");
        if (count < 0) throw new InvalidOperationException("ResolveKeys returned a list with a negative Count");
        var copy = new string[count];
        for (var i = 0; i < count; i++)
            copy[i] = keys[i] ?? throw new InvalidOperationException($"ResolveKeys returned a null key (at index {i})");
        return copy;
    }

    /// <summary>The keys as a JSON array, or, if one is longer than maxKeyLength, the event's KEY_TOO_LONG error instead.</summary>
    static void WriteKeys(Utf8JsonWriter w, string[] keys, int maxKeyLength)
    {
        foreach (var key in keys)
        {
            if (key.Length <= maxKeyLength) continue;
            w.WriteStartObject();
            WriteLimitError(w, ErrorCodes.KeyTooLong, $"ResolveKeys returned a key of {key.Length:N0} characters; the limit is {maxKeyLength:N0}", maxKeyLength);
            w.WriteEndObject();
            return;
        }
        w.WriteStartArray();
        foreach (var key in keys) w.WriteStringValue(key);
        w.WriteEndArray();
    }

    /// <summary>The most keys one event may resolve to (IResolveKeys); more answers RESOLVE_FAILED.</summary>
    const int MaxKeysPerEvent = 1024;
}
