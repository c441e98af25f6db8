using System.Buffers;
using System.Diagnostics;
using System.Text.Encodings.Web;
using System.Text.Json;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Execution;

namespace EventSourcing.Runtime.Host;

/// <summary>
/// Turns one request line into one response line. Protocol (also in runtime/protocol.json):
/// request <c>{"id":n,"type":"...","payload":{...}}</c>; response <c>{"id":n,"type":"result","payload":{...}}</c>
/// or <c>{"id":n,"type":"error","payload":{"code":"...","message":"..."}}</c>.
/// </summary>
public sealed class RequestDispatcher
{
    delegate void Handler(RequestDispatcher self, JsonElement payload, Utf8JsonWriter w);

    /// <summary>The request types this host implements and the modes serving each. Must match runtime/protocol.json
    /// (a test checks it).</summary>
    public static readonly IReadOnlyDictionary<string, HostMode> RequestTypes = new Dictionary<string, HostMode>(StringComparer.Ordinal)
    {
        ["compile"] = HostMode.Compile,
        ["load"] = HostMode.Exec,
        ["unload"] = HostMode.Exec,
        ["apply"] = HostMode.Exec,
        ["resolveKeys"] = HostMode.Exec,
        ["batch"] = HostMode.Exec,
        ["ping"] = HostMode.All,
        ["stats"] = HostMode.All,
#if SANDBOX_PROBE
        ["probe"] = HostMode.All, // test-only build (runtime/bin-probe): see SandboxProbe
#endif
    };

    static readonly Dictionary<string, Handler> Handlers = new(StringComparer.Ordinal)
    {
        ["compile"] = static (s, p, w) => s.Compile(p, w),
        ["load"] = static (s, p, w) => s.Load(p, w),
        ["unload"] = static (s, p, w) => s.Unload(p, w),
        ["apply"] = static (s, p, w) => s.Apply(p, w),
        ["resolveKeys"] = static (s, p, w) => s.ResolveKeys(p, w),
        ["batch"] = static (s, p, w) => s.Batch(p, w),
        ["ping"] = static (_, _, w) => w.WriteBoolean("pong"u8, true),
        ["stats"] = static (s, p, w) => s.Stats(p, w),
#if SANDBOX_PROBE
        ["probe"] = static (_, p, w) => Probe.SandboxProbe.Run(p, w),
#endif
    };

    /// <summary>Requests that run tenant code (or load it): the host writes <c>{"id":n,"type":"started"}</c> as it begins one,
    /// so that a host found dead with such a request unanswered is known to have been running it, not to have died
    /// before reading it (runtime/protocol.json events.started).</summary>
    public static readonly IReadOnlySet<string> AcknowledgedTypes = new HashSet<string>(StringComparer.Ordinal) { "batch", "load" };

    /// <summary>Request types that have a handler (for the coverage test).</summary>
    public static IReadOnlyCollection<string> HandledTypes => Handlers.Keys;

    public static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        Indented = false,
    };

    ArrayBufferWriter<byte> _response = new(64 * 1024);
    readonly Utf8JsonWriter _writer = new(new ArrayBufferWriter<byte>(1), WriterOptions);
    ArrayBufferWriter<byte> _itemLine = new(64 * 1024);
    readonly Utf8JsonWriter _itemWriter = new(new ArrayBufferWriter<byte>(1), WriterOptions);
    JsonElement _requestId;
    long _batches, _batchItems;
    readonly Stopwatch _uptime = Stopwatch.StartNew();
    TenantCompiler? _compiler;

    public RequestDispatcher(HostMode mode)
    {
        Mode = mode;
    }

    public HostMode Mode { get; }
    public AssemblyRegistry Registry { get; } = new();

    /// <summary>Where a batch writes each item's line as soon as the item is done (StdioServer: stdout, flushed), so
    /// that the caller knows which item the host is working on: the first one whose line has not arrived.</summary>
    public Action<ReadOnlyMemory<byte>>? ItemSink { get; set; }

    /// <summary>Handles one request (a complete JSON document) and returns the response line (ending in '\n').
    /// The returned memory is reused by the next call.</summary>
    public ReadOnlyMemory<byte> Handle(ReadOnlyMemory<byte> request)
    {
        JsonDocument? doc = null;
        JsonElement id = default;
        var output = _response;
        var w = _writer;
        if (output.Capacity > 4 << 20) _response = output = new ArrayBufferWriter<byte>(64 * 1024); // don't pin a huge buffer
        output.ResetWrittenCount();
        w.Reset(output);
        try
        {
            try
            {
                doc = JsonDocument.Parse(request, new JsonDocumentOptions { MaxDepth = 256 });
            }
            catch (JsonException ex)
            {
                throw new ProtocolException(ErrorCodes.BadRequest, "request is not valid JSON: " + ex.Message);
            }
            var root = doc.RootElement;
            if (root.ValueKind != JsonValueKind.Object) throw new ProtocolException(ErrorCodes.BadRequest, "request must be a JSON object");
            if (root.TryGetProperty("id"u8, out var idElement) && idElement.ValueKind is JsonValueKind.Number or JsonValueKind.String) id = idElement;
            else throw new ProtocolException(ErrorCodes.BadRequest, "request has no numeric id");
            if (!root.TryGetProperty("type"u8, out var typeElement) || typeElement.ValueKind != JsonValueKind.String)
                throw new ProtocolException(ErrorCodes.BadRequest, "request has no type");
            var type = typeElement.GetString()!;
            if (!Handlers.TryGetValue(type, out var handler)) throw new ProtocolException(ErrorCodes.UnknownType, $"unknown request type '{type}'");
            if ((RequestTypes[type] & Mode) == 0)
                throw new ProtocolException(ErrorCodes.UnsupportedInMode, $"'{type}' is not served in {Mode.ToString().ToLowerInvariant()} mode");
            _requestId = id;
            root.TryGetProperty("payload"u8, out var payload);
            if (payload.ValueKind is not (JsonValueKind.Object or JsonValueKind.Undefined or JsonValueKind.Null))
                throw new ProtocolException(ErrorCodes.BadRequest, "payload must be an object");
            if (AcknowledgedTypes.Contains(type)) ItemSink?.Invoke(StartedLine());

            w.WriteStartObject();
            w.WritePropertyName("id"u8);
            id.WriteTo(w);
            w.WriteString("type"u8, "result"u8);
            w.WritePropertyName("payload"u8);
            w.WriteStartObject();
            handler(this, payload, w);
            w.WriteEndObject();
            w.WriteEndObject();
            w.Flush();
        }
        catch (Exception ex)
        {
            // Drop whatever part of a result was written and answer with an error instead.
            output.ResetWrittenCount();
            w.Reset(output);
            var (code, message) = ex is ProtocolException pe
                ? (pe.Code, pe.Message)
                : (ErrorCodes.Internal, ex.GetType().Name + ": " + ex.Message);
            if (code == ErrorCodes.Internal) Log.Error($"request failed: {ex}");
            WriteError(w, id, code, message);
        }
        finally
        {
            doc?.Dispose();
        }
        output.Write("\n"u8);
        return output.WrittenMemory;
    }

    static void WriteError(Utf8JsonWriter w, JsonElement id, string code, string message)
    {
        w.WriteStartObject();
        w.WritePropertyName("id"u8);
        if (id.ValueKind == JsonValueKind.Undefined) w.WriteNullValue();
        else id.WriteTo(w);
        w.WriteString("type"u8, "error"u8);
        w.WritePropertyName("payload"u8);
        w.WriteStartObject();
        w.WriteString("code"u8, code);
        w.WriteString("message"u8, message);
        w.WriteEndObject();
        w.WriteEndObject();
        w.Flush();
    }

    /// <summary>Writes the unsolicited ready line: <c>{"id":0,"type":"ready","payload":{"pid":..,"mode":..}}</c>.</summary>
    public void WriteReady(IBufferWriter<byte> output)
    {
        using var w = new Utf8JsonWriter(output, WriterOptions);
        w.WriteStartObject();
        w.WriteNumber("id"u8, 0);
        w.WriteString("type"u8, "ready"u8);
        w.WritePropertyName("payload"u8);
        w.WriteStartObject();
        w.WriteNumber("pid"u8, Environment.ProcessId);
        w.WriteString("mode"u8, Mode.ToString().ToLowerInvariant());
        w.WriteNumber("protocolVersion"u8, ProtocolVersion);
        w.WriteString("runtimeVersion"u8, Environment.Version.ToString());
        w.WriteString("sdkVersion"u8, typeof(EventSourcing.Event).Assembly.GetName().Version?.ToString());
        w.WriteBoolean("seccomp"u8, Sandbox.Installed);
        if (CpuPriority.Outcome is { } autogroup) w.WriteString("autogroup"u8, autogroup);
        w.WriteEndObject();
        w.WriteEndObject();
        w.Flush();
        output.Write("\n"u8);
    }

    public const int ProtocolVersion = 2;

    // ---- handlers -------------------------------------------------------------------------------------------

    void Compile(JsonElement payload, Utf8JsonWriter w)
    {
        var filesElement = Required(payload, "files", JsonValueKind.Array);
        var files = new List<SourceFile>();
        foreach (var f in filesElement.EnumerateArray())
        {
            if (f.ValueKind != JsonValueKind.Object) throw new ProtocolException(ErrorCodes.BadRequest, "files[] items must be objects {path, content}");
            var path = Required(f, "path", JsonValueKind.String).GetString()!;
            var content = Required(f, "content", JsonValueKind.String).GetString()!;
            files.Add(new SourceFile(path, content));
        }
        ImplementationKind? kind = OptionalString(payload, "kind") switch
        {
            null => null,
            "reducer" => ImplementationKind.Reducer,
            "projection" => ImplementationKind.Projection,
            var other => throw new ProtocolException(ErrorCodes.BadRequest, $"kind must be \"reducer\" or \"projection\", not \"{other}\""),
        };
        var assemblyName = OptionalString(payload, "assemblyName");
        if (assemblyName is not null && !IsSimpleName(assemblyName))
            throw new ProtocolException(ErrorCodes.BadRequest, "assemblyName may contain only letters, digits, '.', '_' and '-'");
        if (assemblyName is not null && IsReservedName(assemblyName))
            throw new ProtocolException(ErrorCodes.BadRequest, "assemblyName must not start with EventSourcing, System, Microsoft, mscorlib or netstandard");

        PoolHygiene.EnterUnattributed(); // a tenant's sources pass through the pools: the next tenant call clears first
        _compiler ??= new TenantCompiler();
        var result = _compiler.Compile(files, kind, assemblyName);

        w.WriteBoolean("ok"u8, result.Ok);
        if (result.Ok)
        {
            w.WritePropertyName("discovered"u8);
            w.WriteStartArray();
            foreach (var d in result.Discovered)
            {
                w.WriteStartObject();
                w.WriteString("className"u8, d.ClassName);
                w.WriteString("stateTypeName"u8, d.StateTypeName);
                w.WriteString("kind"u8, d.Kind == ImplementationKind.Reducer ? "reducer"u8 : "projection"u8);
                if (d.AggregateType is not null) w.WriteString("aggregateType"u8, d.AggregateType);
                if (d.ProjectionName is not null) w.WriteString("projectionName"u8, d.ProjectionName);
                w.WriteEndObject();
            }
            w.WriteEndArray();
            w.WriteBase64String("assembly"u8, result.Assembly);
            w.WriteString("assemblySha256"u8, Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(result.Assembly!)));
        }
        else
        {
            w.WriteString("compilationError"u8, result.ErrorText);
        }
        // Errors and warnings together, each with its location (the warnings array below keeps the earlier text form).
        w.WritePropertyName("diagnostics"u8);
        w.WriteStartArray();
        foreach (var d in result.Errors) WriteDiagnostic(w, d);
        foreach (var d in result.Warnings) WriteDiagnostic(w, d);
        w.WriteEndArray();
        w.WritePropertyName("warnings"u8);
        w.WriteStartArray();
        foreach (var d in result.Warnings) w.WriteStringValue(d.ToString());
        w.WriteEndArray();
    }

    static void WriteDiagnostic(Utf8JsonWriter w, CompileDiagnostic d)
    {
        w.WriteStartObject();
        if (d.Path is null) w.WriteNull("path"u8);
        else w.WriteString("path"u8, d.Path);
        w.WriteNumber("line"u8, d.Line);
        w.WriteNumber("column"u8, d.Column);
        w.WriteString("severity"u8, d.Severity);
        w.WriteString("id"u8, d.Id);
        w.WriteString("message"u8, d.Message);
        if (d.Hint is not null) w.WriteString("hint"u8, d.Hint);
        w.WriteEndObject();
    }

    void Load(JsonElement payload, Utf8JsonWriter w)
    {
        var assemblyId = RequiredId(payload);
        var base64 = Required(payload, "assembly", JsonValueKind.String);
        var tenantId = OptionalString(payload, "tenantId");
        if (tenantId is { Length: 0 or > 200 }) throw new ProtocolException(ErrorCodes.BadRequest, "tenantId must be 1..200 characters");
        // The verifier's work (and its messages) on this tenant's image, and its type initialisers, go through the pools:
        // it is this tenant's call.
        PoolHygiene.Enter(PoolHygiene.DomainOf(tenantId, assemblyId));
        NodaTimeCaches.BeforeCall(callerUsesNodaTime: true); // its type initialisers may parse NodaTime patterns: nothing of the last call's stays held
        JsonSharedCaches.BeforeCall(callerUsesJson: true); // likewise the serializer's shared caches (JsonSharedCaches)
        if (!base64.TryGetBytesFromBase64(out var image)) throw new ProtocolException(ErrorCodes.BadRequest, "assembly is not valid base64");
        var cap = payload.TryGetProperty("tenantMemoryBytes"u8, out var c) && c.ValueKind != JsonValueKind.Null
            ? c.ValueKind == JsonValueKind.Number && c.TryGetInt64(out var n) && n > 0 ? n : throw new ProtocolException(ErrorCodes.BadRequest, "payload field 'tenantMemoryBytes' must be a positive integer")
            : TenantMemory.DefaultCapBytes;
        var loaded = Registry.Load(assemblyId, image, tenantId, cap);
        w.WriteBoolean("ok"u8, true);
        w.WriteBoolean("alreadyLoaded"u8, !loaded);
        w.WriteNumber("chargedBytes"u8, Registry.Get(assemblyId).ChargedBytes);
        w.WriteNumber("tenantBytes"u8, Registry.Memory.Charged(Registry.Get(assemblyId).TenantId));
    }

    void Unload(JsonElement payload, Utf8JsonWriter w)
    {
        var wasLoaded = Registry.Unload(RequiredId(payload));
        w.WriteBoolean("ok"u8, true);
        w.WriteBoolean("wasLoaded"u8, wasLoaded);
    }

    /// <summary>The runner of a call, once the pools hold nothing of another tenant's (before building the runner: that may
    /// run the tenant's type initializers).</summary>
    (IRunner Runner, LoadedAssembly Loaded) TenantRunner(JsonElement payload)
    {
        var assemblyId = RequiredId(payload);
        var className = Required(payload, "className", JsonValueKind.String).GetString()!;
        var loaded = Registry.Get(assemblyId);
        PoolHygiene.Enter(loaded.HygieneDomain);
        loaded = Registry.Enter(loaded); // loaded again first if a call of it saw a type initialiser fail
        NodaTimeCaches.BeforeCall(loaded.UsesNodaTime); // NodaTime's pattern caches hold only this call's patterns (NodaTimeCaches)
        JsonSharedCaches.BeforeCall(loaded.UsesJson); // the serializer's shared options cache only this call's types
        return (Registry.GetRunner(assemblyId, className), loaded);
    }

    void Apply(JsonElement payload, Utf8JsonWriter w)
    {
        LoadedAssembly? loaded = null;
        try
        {
            (var runner, loaded) = TenantRunner(payload);
            var groups = Required(payload, "groups", JsonValueKind.Array);
            var maxStateBytes = OptionalLimit(payload, "maxStateBytes", ResultLimits.DefaultMaxStateBytes);
            var maxResultBytes = OptionalLimit(payload, "maxResultBytes", ResultLimits.DefaultMaxResultBytes);
            w.WritePropertyName("results"u8);
            w.WriteStartArray();
            foreach (var group in groups.EnumerateArray())
            {
                if (group.ValueKind != JsonValueKind.Object) throw new ProtocolException(ErrorCodes.BadRequest, "groups[] items must be objects {state, events}");
                group.TryGetProperty("state"u8, out var state);
                var events = Required(group, "events", JsonValueKind.Array);
                var lastOnly = group.TryGetProperty("lastStateOnly"u8, out var l) && l.ValueKind == JsonValueKind.True;
                var key = group.TryGetProperty("key"u8, out var k) && k.ValueKind == JsonValueKind.String ? k.GetString() : null;
                runner.ApplyGroup(state, events, w, new ApplyOptions(maxStateBytes, lastOnly, maxResultBytes, key));
            }
            w.WriteEndArray();
        }
        finally
        {
            if (loaded is not null) KeptRegexRunners.AfterCall(loaded.KeptRegexes); // what its matches grew is this call's own (KeptRegexRunners)
            Registry.Leave();
        }
    }

    void ResolveKeys(JsonElement payload, Utf8JsonWriter w)
    {
        LoadedAssembly? loaded = null;
        try
        {
            (var runner, loaded) = TenantRunner(payload);
            var events = Required(payload, "events", JsonValueKind.Array);
            var maxKeyLength = OptionalLimit(payload, "maxKeyLength", ResultLimits.DefaultMaxKeyLength);
            w.WritePropertyName("keys"u8);
            w.WriteStartArray();
            runner.ResolveKeys(events, w, maxKeyLength);
            w.WriteEndArray();
        }
        finally
        {
            if (loaded is not null) KeptRegexRunners.AfterCall(loaded.KeptRegexes);
            Registry.Leave();
        }
    }

    /// <summary>
    /// Several apply/resolveKeys items in one request, possibly for different tenants' assemblies (a shared executor
    /// coalesces the calls waiting for it). Each item is answered on its own line <c>{"id":n,"type":"item","payload":
    /// {"index":i,"result":{..}}}</c> (or <c>"error":{code,message}</c>: that item alone failed), written and flushed
    /// before the next item starts; then the request's own result line. Items run in order, one at a time.
    /// </summary>
    void Batch(JsonElement payload, Utf8JsonWriter w)
    {
        var items = Required(payload, "items", JsonValueKind.Array);
        var sink = ItemSink ?? throw new ProtocolException(ErrorCodes.BadRequest, "batch needs a line-by-line output");
        var index = 0;
        _batches++;
        foreach (var item in items.EnumerateArray())
        {
            sink(BatchItem(item, index++));
            _batchItems++;
        }
        w.WriteNumber("items"u8, index);
    }

    ReadOnlyMemory<byte> BatchItem(JsonElement item, int index)
    {
        var output = _itemLine;
        if (output.Capacity > 4 << 20) _itemLine = output = new ArrayBufferWriter<byte>(64 * 1024);
        var w = _itemWriter;
        output.ResetWrittenCount();
        w.Reset(output);
        try
        {
            WriteItemStart(w, index);
            w.WritePropertyName("result"u8);
            w.WriteStartObject();
            var op = Required(item, "op", JsonValueKind.String);
            if (op.ValueEquals("apply"u8)) Apply(item, w);
            else if (op.ValueEquals("resolveKeys"u8)) ResolveKeys(item, w);
            else throw new ProtocolException(ErrorCodes.BadRequest, "items[].op must be \"apply\" or \"resolveKeys\"");
            w.WriteEndObject();
        }
        catch (Exception ex)
        {
            output.ResetWrittenCount();
            w.Reset(output);
            if (TenantMemory.HeldElsewhere(ex) is { } exhausted) ex = exhausted;
            var (code, message) = ex is ProtocolException pe ? (pe.Code, pe.Message) : (ErrorCodes.Internal, ex.GetType().Name + ": " + ex.Message);
            if (code == ErrorCodes.Internal) Log.Error($"batch item failed: {ex}");
            WriteItemStart(w, index);
            w.WritePropertyName("error"u8);
            w.WriteStartObject();
            w.WriteString("code"u8, code);
            w.WriteString("message"u8, message);
            w.WriteEndObject();
        }
        w.WriteEndObject();
        w.WriteEndObject();
        w.Flush();
        output.Write("\n"u8);
        return output.WrittenMemory;
    }

    ReadOnlyMemory<byte> StartedLine()
    {
        var output = _itemLine;
        var w = _itemWriter;
        output.ResetWrittenCount();
        w.Reset(output);
        w.WriteStartObject();
        w.WritePropertyName("id"u8);
        _requestId.WriteTo(w);
        w.WriteString("type"u8, "started"u8);
        w.WriteEndObject();
        w.Flush();
        output.Write("\n"u8);
        return output.WrittenMemory;
    }

    void WriteItemStart(Utf8JsonWriter w, int index)
    {
        w.WriteStartObject();
        w.WritePropertyName("id"u8);
        _requestId.WriteTo(w);
        w.WriteString("type"u8, "item"u8);
        w.WritePropertyName("payload"u8);
        w.WriteStartObject();
        w.WriteNumber("index"u8, index);
    }

    void Stats(JsonElement payload, Utf8JsonWriter w)
    {
        if (payload.ValueKind == JsonValueKind.Object && payload.TryGetProperty("collect"u8, out var collect) && collect.ValueKind == JsonValueKind.True)
            Registry.Collect();
        w.WriteNumber("loadedAssemblies"u8, Registry.Count);
        w.WriteNumber("unloadingAssemblies"u8, Registry.UnloadingCount);
        w.WriteNumber("gcHeapBytes"u8, GC.GetTotalMemory(false));
        w.WriteNumber("workingSetBytes"u8, Environment.WorkingSet);
        w.WriteNumber("gen0Collections"u8, GC.CollectionCount(0));
        w.WriteNumber("gen1Collections"u8, GC.CollectionCount(1));
        w.WriteNumber("gen2Collections"u8, GC.CollectionCount(2));
        w.WriteNumber("batches"u8, _batches);
        w.WriteNumber("batchItems"u8, _batchItems);
        w.WriteNumber("poolScrubs"u8, PoolHygiene.Switches);
        w.WriteString("mode"u8, Mode.ToString().ToLowerInvariant());
        w.WriteNumber("uptimeMs"u8, (long)_uptime.Elapsed.TotalMilliseconds);
        if ((Mode & HostMode.Compile) != 0) w.WriteString("referenceSource"u8, ReferenceSet.Source);
    }

    // ---- helpers --------------------------------------------------------------------------------------------

    static JsonElement Required(JsonElement obj, string name, JsonValueKind kind)
    {
        if (obj.ValueKind != JsonValueKind.Object || !obj.TryGetProperty(name, out var value))
            throw new ProtocolException(ErrorCodes.BadRequest, $"payload field '{name}' is required");
        if (value.ValueKind != kind)
            throw new ProtocolException(ErrorCodes.BadRequest, $"payload field '{name}' must be {KindName(kind)}");
        return value;
    }

    static string? OptionalString(JsonElement obj, string name)
    {
        if (obj.ValueKind != JsonValueKind.Object || !obj.TryGetProperty(name, out var value) || value.ValueKind == JsonValueKind.Null) return null;
        if (value.ValueKind != JsonValueKind.String) throw new ProtocolException(ErrorCodes.BadRequest, $"payload field '{name}' must be a string");
        return value.GetString();
    }

    /// <summary>A positive integer limit the caller may set; absent or null gives the default.</summary>
    static int OptionalLimit(JsonElement obj, string name, int fallback)
    {
        if (!obj.TryGetProperty(name, out var value) || value.ValueKind == JsonValueKind.Null) return fallback;
        if (value.ValueKind != JsonValueKind.Number || !value.TryGetInt32(out var n) || n < 1)
            throw new ProtocolException(ErrorCodes.BadRequest, $"payload field '{name}' must be a positive integer");
        return n;
    }

    static string RequiredId(JsonElement payload)
    {
        var id = Required(payload, "assemblyId", JsonValueKind.String).GetString()!;
        if (id.Length == 0 || id.Length > 200) throw new ProtocolException(ErrorCodes.BadRequest, "assemblyId must be 1..200 characters");
        return id;
    }

    static bool IsSimpleName(string s) =>
        s.Length is > 0 and <= 200 && s.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-');

    static readonly string[] ReservedNames = ["EventSourcing", "System", "Microsoft", "mscorlib", "netstandard"];

    /// <summary>Names that could collide with the host, the SDK (whose InternalsVisibleTo names the host) or the framework.</summary>
    static bool IsReservedName(string s) =>
        ReservedNames.Any(p => s.Equals(p, StringComparison.OrdinalIgnoreCase) || s.StartsWith(p + ".", StringComparison.OrdinalIgnoreCase));

    static string KindName(JsonValueKind kind) => kind switch
    {
        JsonValueKind.Array => "an array",
        JsonValueKind.Object => "an object",
        JsonValueKind.String => "a string",
        JsonValueKind.Number => "a number",
        _ => kind.ToString().ToLowerInvariant(),
    };
}
