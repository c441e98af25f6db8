using System.Text.Json;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>runtime/protocol.json is the contract with the TypeScript side: the host must implement exactly what it lists.</summary>
public class ProtocolSchemaTests
{
    static readonly JsonObject Protocol = JsonNode.Parse(File.ReadAllText(Path.Combine(Repo.Runtime, "protocol.json")))!.AsObject();

    static HashSet<string> Strings(JsonNode? node) => node!.AsArray().Select(n => n!.GetValue<string>()).ToHashSet();

    [Fact]
    public void HandlersCoverExactlyTheRequestTypesListed()
    {
        var listed = Protocol["requests"]!.AsObject().Select(p => p.Key).ToHashSet();
        Assert.Equal(listed.OrderBy(x => x), RequestDispatcher.HandledTypes.OrderBy(x => x));
        Assert.Equal(listed.OrderBy(x => x), RequestDispatcher.RequestTypes.Keys.OrderBy(x => x));
    }

    [Fact]
    public void ModesMatch()
    {
        foreach (var (type, spec) in Protocol["requests"]!.AsObject())
        {
            var modes = Strings(spec!["modes"]);
            var served = RequestDispatcher.RequestTypes[type];
            Assert.Equal(modes.Contains("compile"), served.HasFlag(HostMode.Compile));
            Assert.Equal(modes.Contains("exec"), served.HasFlag(HostMode.Exec));
            Assert.Contains("all", modes);
        }
    }

    [Fact]
    public void TheRequestsThatSayWhenTheyStartAreTheOnesListed()
    {
        var listed = Strings(Protocol["events"]!["started"]!["types"]);
        Assert.Equal(listed.OrderBy(x => x), RequestDispatcher.AcknowledgedTypes.OrderBy(x => x));
    }

    [Fact]
    public void ErrorCodesMatch()
    {
        var responseCodes = Strings(Protocol["envelopes"]!["error"]!["properties"]!["payload"]!["properties"]!["code"]!["enum"]);
        Assert.Equal(responseCodes.OrderBy(x => x), ErrorCodes.ResponseCodes.OrderBy(x => x));
        var itemCodes = Strings(Protocol["definitions"]!["itemError"]!["properties"]!["code"]!["enum"]);
        Assert.Equal(itemCodes.OrderBy(x => x), ErrorCodes.ItemCodes.OrderBy(x => x));
    }

    [Fact]
    public void EveryRequestHasPayloadAndResultSchemas()
    {
        Assert.Equal(RequestDispatcher.ProtocolVersion, Protocol["protocolVersion"]!.GetValue<int>());
        foreach (var (type, spec) in Protocol["requests"]!.AsObject())
        {
            Assert.True(spec!["payload"] is JsonObject, type + " has no payload schema");
            Assert.True(spec["result"] is JsonObject, type + " has no result schema");
        }
    }

    [Fact]
    public void TheReadyLineHasEveryRequiredField()
    {
        var output = new System.Buffers.ArrayBufferWriter<byte>();
        new RequestDispatcher(HostMode.Exec).WriteReady(output);
        var ready = JsonNode.Parse(output.WrittenSpan)!.AsObject();
        Assert.Equal("ready", ready["type"]!.GetValue<string>());
        var payload = ready["payload"]!.AsObject();
        var schema = Protocol["events"]!["ready"]!["payload"]!;
        foreach (var field in Strings(schema["required"])) Assert.True(payload.ContainsKey(field), $"ready lacks '{field}'");
        foreach (var (field, _) in payload) Assert.True(schema["properties"]!.AsObject().ContainsKey(field), $"ready writes '{field}', which protocol.json does not list");
        Assert.Equal(JsonValueKind.False, payload["seccomp"]!.GetValueKind()); // in-process: the test runner installs no filter
    }

    [Fact]
    public void RequiredResultFieldsAreWrittenByTheHost()
    {
        // ping and stats are shape-checked against the schema's required fields.
        var host = new InProcessHost(HostMode.Exec);
        foreach (var type in new[] { "ping", "stats" })
        {
            var result = host.Result(type);
            foreach (var field in Strings(Protocol["requests"]![type]!["result"]!["required"]))
                Assert.True(result.ContainsKey(field), $"{type} result lacks '{field}'");
        }
    }
}
