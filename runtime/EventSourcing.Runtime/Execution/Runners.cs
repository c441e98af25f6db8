using System.Buffers;
using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace EventSourcing.Runtime.Execution;

/// <summary>Runs one reducer/projection class; built once per (assemblyId, className) with MakeGenericType,
/// after which calls involve no reflection.</summary>
public interface IRunner
{
    Type ImplementationType { get; }
    Type StateType { get; }
    bool CanResolveKeys { get; }

    /// <summary>Writes <c>{"states":[...],"ok":true}</c> or <c>{"states":[...],"ok":false,"failedIndex":n,"error":{...}}</c>.</summary>
    void ApplyGroup(JsonElement state, JsonElement events, Utf8JsonWriter writer);

    /// <summary>Writes one key (string or null) or <c>{"error":{...}}</c> per event, as array items.</summary>
    void ResolveKeys(JsonElement events, Utf8JsonWriter writer);
}

public static class RunnerFactory
{
    public static IRunner Create(Type implementation, JsonSerializerOptions options)
    {
        var reducer = FindInterface(implementation, typeof(IReducer<>));
        var projection = FindInterface(implementation, typeof(IProjection<>));
        if (reducer is null && projection is null)
            throw new ProtocolException(ErrorCodes.ClassNotFound, $"{implementation.FullName} implements neither IReducer<TState> nor IProjection<TState>");
        if (implementation.IsAbstract || implementation.IsGenericTypeDefinition || implementation.GetConstructor(Type.EmptyTypes) is null)
            throw new ProtocolException(ErrorCodes.ClassNotFound, $"{implementation.FullName} must be a concrete class with a public parameterless constructor");

        var runnerType = reducer is not null
            ? typeof(ReducerRunner<,>).MakeGenericType(implementation, reducer.GetGenericArguments()[0])
            : typeof(ProjectionRunner<,>).MakeGenericType(implementation, projection!.GetGenericArguments()[0]);
        return (IRunner)Activator.CreateInstance(runnerType, options)!;
    }

    static Type? FindInterface(Type type, Type open)
    {
        Type? found = null;
        foreach (var i in type.GetInterfaces())
        {
            if (!i.IsGenericType || i.GetGenericTypeDefinition() != open) continue;
            if (found is not null) throw new ProtocolException(ErrorCodes.ClassNotFound, $"{type.FullName} implements {open.Name} more than once");
            found = i;
        }
        return found;
    }
}

/// <summary>Shared machinery of both runner kinds.</summary>
public abstract class RunnerBase<TState> where TState : new()
{
    protected readonly JsonSerializerOptions Options;
    protected readonly JsonTypeInfo<TState> StateInfo;
    readonly ArrayBufferWriter<byte> _scratch = new(1024);
    readonly Utf8JsonWriter _scratchWriter;

    protected RunnerBase(JsonSerializerOptions options)
    {
        Options = options;
        StateInfo = (JsonTypeInfo<TState>)options.GetTypeInfo(typeof(TState));
        _scratchWriter = new Utf8JsonWriter(_scratch, new JsonWriterOptions { Encoder = options.Encoder, SkipValidation = false });
    }

    public Type StateType => typeof(TState);

    protected abstract TState ApplyOne(object instance, TState state, Event e);
    protected abstract object NewInstance();

    public void ApplyGroup(JsonElement stateElement, JsonElement events, Utf8JsonWriter w)
    {
        if (events.ValueKind != JsonValueKind.Array) throw new ProtocolException(ErrorCodes.BadRequest, "events must be an array");
        w.WriteStartObject();
        w.WritePropertyName("states"u8);
        w.WriteStartArray();
        var (index, failCode, failure) = Fold(stateElement, events, w);
        w.WriteEndArray();
        if (failure is null)
        {
            w.WriteBoolean("ok"u8, true);
        }
        else
        {
            w.WriteBoolean("ok"u8, false);
            w.WriteNumber("failedIndex"u8, index);
            WriteError(w, failCode!, failure);
        }
        w.WriteEndObject();
        if (_scratch.Capacity > 1 << 20) _scratch.Clear(); // do not keep a huge buffer around after one big state
    }

    /// <summary>Applies the events in order, writing the state after each one; stops at the first failure.</summary>
    (int Index, string? Code, Exception? Failure) Fold(JsonElement stateElement, JsonElement events, Utf8JsonWriter w)
    {
        TState state;
        try
        {
            state = stateElement.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined
                ? new TState()
                : stateElement.Deserialize(StateInfo) ?? new TState();
        }
        catch (Exception ex)
        {
            return (0, ErrorCodes.StateDeserializationFailed, ex);
        }

        object instance;
        try
        {
            instance = NewInstance();
        }
        catch (Exception ex)
        {
            return (0, ErrorCodes.ApplyFailed, ex is TargetInvocationException { InnerException: { } inner } ? inner : ex);
        }

        var index = 0;
        foreach (var eventElement in events.EnumerateArray())
        {
            Event e;
            try
            {
                e = EventReader.Read(eventElement, Options);
            }
            catch (Exception ex)
            {
                return (index, ErrorCodes.InvalidEvent, ex);
            }
            try
            {
                state = ApplyOne(instance, state, e);
                if (state is null) throw new InvalidOperationException("Apply returned null");
            }
            catch (Exception ex)
            {
                return (index, ErrorCodes.ApplyFailed, ex);
            }
            // Serialize now: the next Apply may mutate the same instance.
            _scratch.ResetWrittenCount();
            _scratchWriter.Reset(_scratch);
            try
            {
                JsonSerializer.Serialize(_scratchWriter, state, StateInfo);
                _scratchWriter.Flush();
            }
            catch (Exception ex)
            {
                return (index, ErrorCodes.StateSerializationFailed, ex);
            }
            if (!IsOneJsonValueOnOneLine(_scratch.WrittenSpan))
                return (index, ErrorCodes.StateSerializationFailed,
                    new JsonException("the state's JSON is not one valid JSON value on one line (a custom converter wrote raw JSON or line breaks)"));
            w.WriteRawValue(_scratch.WrittenSpan, skipInputValidation: true);
            index++;
        }
        return (index, null, null);
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
        w.WriteEndObject();
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

public sealed class ReducerRunner<TReducer, TState> : RunnerBase<TState>, IRunner
    where TReducer : IReducer<TState>, new()
    where TState : new()
{
    public ReducerRunner(JsonSerializerOptions options) : base(options)
    {
    }

    public Type ImplementationType => typeof(TReducer);
    public bool CanResolveKeys => false;

    protected override object NewInstance() => new TReducer();

    protected override TState ApplyOne(object instance, TState state, Event e) => ((TReducer)instance).Apply(state, e);

    public void ResolveKeys(JsonElement events, Utf8JsonWriter writer) =>
        throw new ProtocolException(ErrorCodes.NotAProjection, $"{typeof(TReducer).FullName} is a reducer; resolveKeys needs an IProjection<TState>");
}

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

    public void ResolveKeys(JsonElement events, Utf8JsonWriter w)
    {
        if (events.ValueKind != JsonValueKind.Array) throw new ProtocolException(ErrorCodes.BadRequest, "events must be an array");
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
                else w.WriteStringValue(key);
            }
            catch (Exception ex)
            {
                w.WriteStartObject();
                WriteError(w, ErrorCodes.ResolveFailed, ex);
                w.WriteEndObject();
            }
        }
    }
}
