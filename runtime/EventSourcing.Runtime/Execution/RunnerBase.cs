using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Execution;

/// <summary>Shared machinery of both runner kinds.</summary>
public abstract class RunnerBase<TState> where TState : new()
{
    protected JsonSerializerOptions Options { get; }
    protected JsonTypeInfo<TState> StateInfo { get; }
    // Two scratch buffers taken in turn: when a state fails (too large, a throwing getter), the previous
    // state's JSON is still whole in the other one (lastStateOnly writes it at the end).
    readonly CappedBufferWriter[] _scratch = [new(), new()];
    readonly Utf8JsonWriter _scratchWriter;

    protected RunnerBase(JsonSerializerOptions options)
    {
        Options = options;
        StateInfo = (JsonTypeInfo<TState>)options.GetTypeInfo(typeof(TState));
        _scratchWriter = new Utf8JsonWriter(_scratch[0], new JsonWriterOptions { Encoder = options.Encoder, SkipValidation = false });
    }

    public Type StateType => typeof(TState);

    /// <summary>One event's Apply; <paramref name="key"/>: the lane's key when the call names it (projections), else null.</summary>
    protected abstract TState ApplyOne(object instance, TState state, Event e, string? key);
    protected abstract object NewInstance();

    /// <summary>Projections: JSON null is a removed key's state, so only ShouldDelete may write it (not a tenant converter).</summary>
    protected virtual bool RefusesNullState => false;

    const string NullStateMessage =
        "the state serialized as JSON null (a custom converter?), which is how a removed key is written: implement IDeletableProjection<TState> to remove a key's state";

    /// <summary>Whether the key's state is removed after <paramref name="e"/> (projections opting in with IDeletableProjection).</summary>
    protected virtual bool ShouldDelete(object instance, TState state, Event e) => false;

    public void ApplyGroup(JsonElement stateElement, JsonElement events, Utf8JsonWriter w, ApplyOptions options)
    {
        if (events.ValueKind != JsonValueKind.Array) throw new ProtocolException(ErrorCodes.BadRequest, "events must be an array");
        w.WriteStartObject();
        w.WritePropertyName("states"u8);
        w.WriteStartArray();
        var failure = Fold(stateElement, events, w, options, out var truncated);
        // Judged here, out of Fold: the call's own state and objects are unreachable now (see TenantMemory.HeldElsewhere).
        if (failure?.Exception is OutOfMemoryException oom && TenantMemory.HeldElsewhere(oom) is { } exhausted) throw exhausted;
        w.WriteEndArray();
        if (failure is not { } f)
        {
            w.WriteBoolean("ok"u8, true);
            if (truncated) w.WriteBoolean("truncated"u8, true);
        }
        else
        {
            w.WriteBoolean("ok"u8, false);
            w.WriteNumber("failedIndex"u8, f.Index);
            if (f.Exception is not null) WriteError(w, f.Code, f.Exception);
            else WriteLimitError(w, f.Code, f.Message!, options.MaxStateBytes);
        }
        w.WriteEndObject();
        TrimScratch();
    }

    readonly record struct FoldFailure(int Index, string Code, Exception? Exception, string? Message = null);

    /// <summary>Applies the events in order, writing the state after each one (or only the last); stops at the first failure.</summary>
    FoldFailure? Fold(JsonElement stateElement, JsonElement events, Utf8JsonWriter w, ApplyOptions options, out bool truncated)
    {
        truncated = false;
        TState state;
        try
        {
            state = stateElement.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined
                ? new TState()
                : stateElement.Deserialize(StateInfo) ?? new TState();
        }
        catch (Exception ex)
        {
            return new(0, ErrorCodes.StateDeserializationFailed, ex);
        }

        object instance;
        try
        {
            instance = NewInstance();
        }
        catch (Exception ex)
        {
            return new(0, ErrorCodes.ApplyFailed, ex is TargetInvocationException { InnerException: { } inner } ? inner : ex);
        }

        var index = 0;
        var current = 0;
        FoldFailure? failure = null;
        foreach (var eventElement in events.EnumerateArray())
        {
            Event e;
            try
            {
                e = EventReader.Read(eventElement, Options);
            }
            catch (Exception ex)
            {
                failure = new(index, ErrorCodes.InvalidEvent, ex);
                break;
            }
            bool deleted;
            try
            {
                state = ApplyOne(instance, state, e, options.Key);
                if (state is null) throw new InvalidOperationException("Apply returned null");
                // A removed key's next event starts again from new TState(), as a key never seen.
                deleted = ShouldDelete(instance, state, e);
                if (deleted) state = NewState();
            }
            catch (Exception ex)
            {
                failure = new(index, ErrorCodes.ApplyFailed, ex);
                break;
            }
            // Serialize now: the next Apply may mutate the same instance. The size is checked on every
            // state, also those lastStateOnly does not write. A removed state is JSON null (the lanes store no state).
            var next = index == 0 ? current : 1 - current;
            failure = deleted ? WriteDeleted(_scratch[next], options.MaxStateBytes) : Serialize(state, _scratch[next], options.MaxStateBytes, index);
            if (failure is null && !deleted && RefusesNullState && _scratch[next].WrittenSpan.SequenceEqual("null"u8))
                failure = new(index, ErrorCodes.StateSerializationFailed, new JsonException(NullStateMessage));
            if (failure is not null) break;
            current = next;
            if (!options.LastStateOnly)
            {
                // This event counts as not applied: the caller goes on from the one before it.
                if (index > 0 && w.BytesCommitted + w.BytesPending + _scratch[current].WrittenCount > options.MaxResultBytes)
                {
                    truncated = true;
                    break;
                }
                w.WriteStringValue(_scratch[current].WrittenSpan);
            }
            index++;
        }
        if (options.LastStateOnly && index > 0) w.WriteStringValue(_scratch[current].WrittenSpan);
        return failure;
    }

    /// <summary>new TState() with the tenant constructor's own exception (not the TargetInvocationException around it).</summary>
    static TState NewState()
    {
        try
        {
            return new TState();
        }
        catch (TargetInvocationException ex) when (ex.InnerException is { } inner)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Capture(inner).Throw();
            throw;
        }
    }

    FoldFailure? WriteDeleted(CappedBufferWriter buffer, int maxBytes)
    {
        buffer.Reset(maxBytes);
        _scratchWriter.Reset(buffer);
        _scratchWriter.WriteNullValue();
        _scratchWriter.Flush();
        return null;
    }

    FoldFailure? Serialize(TState state, CappedBufferWriter buffer, int maxBytes, int index)
    {
        buffer.Reset(maxBytes);
        _scratchWriter.Reset(buffer);
        var whole = true;
        try
        {
            JsonSerializer.Serialize(_scratchWriter, state, StateInfo);
            _scratchWriter.Flush();
        }
        catch (Exception ex)
        {
            if (!buffer.Overflowed) return new(index, ErrorCodes.StateSerializationFailed, ex);
            whole = false;
        }
        if (!buffer.Overflowed)
        {
            // A tenant converter may write raw JSON: a line break or a second value would forge protocol lines.
            return IsOneJsonValueOnOneLine(buffer.WrittenSpan)
                ? null
                : new(index, ErrorCodes.StateSerializationFailed,
                    new JsonException("the state's JSON is not one valid JSON value on one line (a custom converter wrote raw JSON or line breaks)"));
        }
        // Serializing stops as soon as the state cannot fit, so its size may be known only from below.
        var message = whole
            ? $"the state after this event is {buffer.WrittenCount:N0} bytes of JSON; the limit is {maxBytes:N0} bytes"
            : $"the state after this event is at least {Math.Max(buffer.MinimumSize, maxBytes + 1L):N0} bytes of JSON; the limit is {maxBytes:N0} bytes";
        _scratchWriter.Reset(buffer); // drop what a failed serialization left pending
        return new(index, ErrorCodes.StateTooLarge, null, message);
    }

    /// <summary>Drops scratch buffers a big state grew, once its group is written.</summary>
    void TrimScratch()
    {
        foreach (var b in _scratch) b.Trim();
    }

    /// <summary>An error the host itself raises (a limit), with the limit it enforces.</summary>
    internal static void WriteLimitError(Utf8JsonWriter w, string code, string message, long limit)
    {
        w.WritePropertyName("error"u8);
        w.WriteStartObject();
        w.WriteString("code"u8, code);
        w.WriteString("message"u8, message);
        w.WriteNumber("limit"u8, limit);
        w.WriteEndObject();
    }

    /// <summary>
    /// A tenant JsonConverter writes through Utf8JsonWriter.WriteRawValue, unvalidated if it asks, and even validated raw
    /// JSON may hold line breaks as whitespace: copied as is, that would end the protocol line early and let the tenant
    /// forge responses. So the state's bytes must be exactly one JSON value without a line break.
    /// </summary>
    bool IsOneJsonValueOnOneLine(ReadOnlySpan<byte> json)
    {
        if (json.IndexOfAny((byte)'\n', (byte)'\r') >= 0) return false;
        try
        {
            var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = Options.MaxDepth == 0 ? 64 : Options.MaxDepth });
            return reader.Read() && reader.TrySkip() && !reader.Read();
        }
        catch (JsonException)
        {
            return false;
        }
    }

    internal static void WriteError(Utf8JsonWriter w, string code, Exception ex)
    {
        w.WritePropertyName("error"u8);
        w.WriteStartObject();
        w.WriteString("code"u8, code);
        w.WriteString("message"u8, ErrorMessage(ex));
        w.WriteString("exceptionType"u8, ex.GetType().FullName);
        string? trace;
        try
        {
            trace = ex.StackTrace;
        }
        catch
        {
            trace = null;
        }
        if (trace is not null)
            w.WriteString("stackTrace"u8, trace.Length > 4000 ? trace[..4000] : trace);
        WriteFrames(w, ex);
        w.WriteEndObject();
    }

    /// <summary>The tenant's own frames (TenantFrames): method, the archive's file and the line.</summary>
    static void WriteFrames(Utf8JsonWriter w, Exception ex)
    {
        w.WritePropertyName("frames"u8);
        w.WriteStartArray();
        foreach (var f in TenantFrames.Of(ex))
        {
            w.WriteStartObject();
            w.WriteString("method"u8, f.Method);
            if (f.File is null) w.WriteNull("file"u8);
            else w.WriteString("file"u8, f.File);
            if (f.Line is { } line) w.WriteNumber("line"u8, line);
            else w.WriteNull("line"u8);
            w.WriteEndObject();
        }
        w.WriteEndArray();
    }

    static string ErrorMessage(Exception ex)
    {
        string message;
        try
        {
            // Tenant exception types may override Message.
            message = ex.Message ?? "";
            if (ex is TypeInitializationException { InnerException: { } inner }) message += ": " + inner.Message;
        }
        catch
        {
            message = ex.GetType().FullName + " (its Message threw)";
        }
        return message.Length > 4000 ? message[..4000] : message;
    }
}
