using System.Text.Json.Nodes;

namespace EventSourcing.Runtime.Tests;

public class ProcessTests
{
    static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    static JsonObject FilesPayload(IEnumerable<Compilation.SourceFile> files) => new()
    {
        ["files"] = new JsonArray(files.Select(f => (JsonNode)new JsonObject { ["path"] = f.Path, ["content"] = f.Content }).ToArray()),
    };

    [Fact]
    public void ReadyCompileLoadApplyOverStdioWithPipelinedRequests()
    {
        using var host = new HostProcess("all");
        var ready = host.Read(Timeout)!;
        Assert.Equal(0, ready["id"]!.GetValue<int>());
        Assert.Equal("ready", ready["type"]!.GetValue<string>());
        Assert.Equal(host.Process.Id, ready["payload"]!["pid"]!.GetValue<int>());
        Assert.Equal("all", ready["payload"]!["mode"]!.GetValue<string>());
        // The host filters itself before reading any request, and compiling + applying (below) still work under it.
        Assert.True(ready["payload"]!["seccomp"]!.GetValue<bool>(), host.Stderr);

        // Pipelined: compile, ping, an unknown type and a line that is not JSON, in one write.
        host.Send("compile", FilesPayload(Repo.Example("bank-account")), 1);
        host.Send("ping", new JsonObject(), 2);
        host.Send("explode", new JsonObject(), 3);
        host.Input.Write("{this is not json\n");
        host.Flush();
        var compile = host.Read(Timeout)!;
        Assert.Equal(1, compile["id"]!.GetValue<int>());
        Assert.Equal("result", compile["type"]!.GetValue<string>());
        Assert.True(compile["payload"]!["ok"]!.GetValue<bool>());
        var ping = host.Read(Timeout)!;
        Assert.Equal(2, ping["id"]!.GetValue<int>());
        Assert.True(ping["payload"]!["pong"]!.GetValue<bool>());
        var unknown = host.Read(Timeout)!;
        Assert.Equal(3, unknown["id"]!.GetValue<int>());
        Assert.Equal("error", unknown["type"]!.GetValue<string>());
        Assert.Equal("UNKNOWN_TYPE", unknown["payload"]!["code"]!.GetValue<string>());
        var bad = host.Read(Timeout)!;
        Assert.Null(bad["id"]);
        Assert.Equal("BAD_REQUEST", bad["payload"]!["code"]!.GetValue<string>());

        // Pipelined: load, two applies (one failing), stats.
        var assembly = compile["payload"]!["assembly"]!.GetValue<string>();
        host.Send("load", new JsonObject { ["assemblyId"] = "bank", ["assembly"] = assembly }, 10);
        host.Send("apply", new JsonObject
        {
            ["assemblyId"] = "bank",
            ["className"] = "BankAccount.AccountReducer",
            ["groups"] = new JsonArray(new JsonObject
            {
                ["state"] = null,
                ["events"] = Events.Array(Events.Make("AccountOpened", new { owner = "Zoë \"Z\" Ünïcode 🚀" }), Events.Make("MoneyDeposited", new { amount = 12.34m })),
            }),
        }, 11);
        host.Send("apply", new JsonObject
        {
            ["assemblyId"] = "bank",
            ["className"] = "BankAccount.AccountReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("MoneyWithdrawn", new { amount = 1 })) }),
        }, 12);
        host.Send("stats", new JsonObject(), 13);
        host.Flush();

        var load = host.Read(Timeout)!;
        Assert.Equal(10, load["id"]!.GetValue<int>());
        Assert.True(load["payload"]!["ok"]!.GetValue<bool>());
        var apply = host.Read(Timeout)!;
        Assert.Equal(11, apply["id"]!.GetValue<int>());
        var states = apply["payload"]!["results"]![0]!["states"]!.AsArray();
        // Each state is a string holding the state's JSON exactly as System.Text.Json wrote it (a decimal keeps its scale).
        Assert.Contains("\"balance\":12.34,", states[1]!.GetValue<string>());
        Assert.Equal("Zoë \"Z\" Ünïcode 🚀", JsonNode.Parse(states[0]!.GetValue<string>())!["owner"]!.GetValue<string>());
        Assert.Equal(12.34m, JsonNode.Parse(states[1]!.GetValue<string>())!["balance"]!.GetValue<decimal>());
        var failed = host.Read(Timeout)!;
        Assert.Equal(12, failed["id"]!.GetValue<int>());
        Assert.Equal(0, failed["payload"]!["results"]![0]!["failedIndex"]!.GetValue<int>());
        var stats = host.Read(Timeout)!;
        Assert.Equal(13, stats["id"]!.GetValue<int>());
        Assert.Equal(1, stats["payload"]!["loadedAssemblies"]!.GetValue<int>());

        // EOF on stdin ends the host cleanly.
        host.Input.Close();
        Assert.True(host.Process.WaitForExit(10_000));
        Assert.Equal(0, host.Process.ExitCode);
        Assert.Null(host.Read(TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public void ModesAreEnforcedAcrossTheProcessBoundary()
    {
        using var exec = new HostProcess("exec");
        Assert.Equal("exec", exec.Read(Timeout)!["payload"]!["mode"]!.GetValue<string>());
        exec.Send("compile", FilesPayload(Repo.Example("bank-account")), 1);
        exec.Flush();
        Assert.Equal("UNSUPPORTED_IN_MODE", exec.Read(Timeout)!["payload"]!["code"]!.GetValue<string>());

        using var compile = new HostProcess("compile");
        Assert.Equal("compile", compile.Read(Timeout)!["payload"]!["mode"]!.GetValue<string>());
        compile.Send("apply", new JsonObject(), 1);
        compile.Flush();
        Assert.Equal("UNSUPPORTED_IN_MODE", compile.Read(Timeout)!["payload"]!["code"]!.GetValue<string>());
    }

    /// <summary>What the TypeScript side relies on: runaway tenant code shows up as a missing/failed response
    /// or a dead process, never as a corrupted stream.</summary>
    [Fact]
    public void RuntimeContainedCorpusEntriesBehaveAsDocumented()
    {
        string Corpus(string name) => File.ReadAllText(Path.Combine(Repo.EscapeCorpus, name + ".cs"));
        string CompileOne(HostProcess host, string name, int id)
        {
            host.Send("compile", FilesPayload(new[] { new Compilation.SourceFile(name + ".cs", Corpus(name)) }), id);
            host.Flush();
            var r = host.Read(Timeout)!;
            Assert.True(r["payload"]!["ok"]!.GetValue<bool>(), r.ToJsonString());
            return r["payload"]!["assembly"]!.GetValue<string>();
        }
        JsonObject ApplyOne(string assemblyId, int id) => new()
        {
            ["assemblyId"] = assemblyId,
            ["className"] = "Escape.EscapeReducer",
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("X", new { })) }),
        };

        using var compiler = new HostProcess("compile");
        compiler.Read(Timeout);
        var regex = CompileOne(compiler, "catastrophic-regex", 1);
        var loop = CompileOne(compiler, "infinite-loop", 2);
        var recursion = CompileOne(compiler, "unbounded-recursion", 3);

        // Catastrophic backtracking: stopped by the default regex timeout (set low here), the process stays healthy.
        using (var exec = new HostProcess("exec", new Dictionary<string, string> { ["EVENTSOURCING_REGEX_TIMEOUT_MS"] = "200" }))
        {
            exec.Read(Timeout);
            exec.Send("load", new JsonObject { ["assemblyId"] = "re", ["assembly"] = regex }, 1);
            exec.Send("apply", ApplyOne("re", 2), 2);
            exec.Send("ping", new JsonObject(), 3);
            exec.Flush();
            Assert.True(exec.Read(Timeout)!["payload"]!["ok"]!.GetValue<bool>());
            var r = exec.Read(Timeout)!["payload"]!["results"]![0]!;
            Assert.Equal("APPLY_FAILED", r["error"]!["code"]!.GetValue<string>());
            Assert.Equal("System.Text.RegularExpressions.RegexMatchTimeoutException", r["error"]!["exceptionType"]!.GetValue<string>());
            Assert.True(exec.Read(Timeout)!["payload"]!["pong"]!.GetValue<bool>());
        }

        // Infinite loop: no answer before the deadline; the caller kills the process.
        using (var exec = new HostProcess("exec"))
        {
            exec.Read(Timeout);
            exec.Send("load", new JsonObject { ["assemblyId"] = "loop", ["assembly"] = loop }, 1);
            exec.Send("apply", ApplyOne("loop", 2), 2);
            exec.Flush();
            Assert.True(exec.Read(Timeout)!["payload"]!["ok"]!.GetValue<bool>());
            Assert.Null(exec.Read(TimeSpan.FromMilliseconds(750)));
            exec.Process.Kill();
            Assert.True(exec.Process.WaitForExit(10_000));
        }

        // Unbounded recursion: the process dies (stack overflow cannot be caught); stdout ends without a reply.
        using (var exec = new HostProcess("exec"))
        {
            exec.Read(Timeout);
            exec.Send("load", new JsonObject { ["assemblyId"] = "rec", ["assembly"] = recursion }, 1);
            exec.Send("apply", ApplyOne("rec", 2), 2);
            exec.Flush();
            Assert.True(exec.Read(Timeout)!["payload"]!["ok"]!.GetValue<bool>());
            Assert.Null(exec.Read(Timeout));
            Assert.True(exec.Process.WaitForExit(30_000));
            Assert.NotEqual(0, exec.Process.ExitCode);
        }
    }
    /// <summary>What the shared executor pool relies on to blame the right tenant: a batch's items are flushed one by one,
    /// so while an item spins, the lines of the items before it have arrived and those after it have not.</summary>
    [Fact]
    public void BatchItemsArriveOneByOneSoTheItemThatHangsIsKnown()
    {
        using var compiler = new HostProcess("compile");
        compiler.Read(Timeout);
        compiler.Send("compile", FilesPayload(Repo.Example("bank-account")), 1);
        compiler.Send("compile", FilesPayload(new[] { new Compilation.SourceFile("loop.cs", File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "infinite-loop.cs"))) }), 2);
        compiler.Flush();
        var bank = compiler.Read(Timeout)!["payload"]!["assembly"]!.GetValue<string>();
        var loop = compiler.Read(Timeout)!["payload"]!["assembly"]!.GetValue<string>();

        JsonObject Item(string assemblyId, string className) => new()
        {
            ["op"] = "apply",
            ["assemblyId"] = assemblyId,
            ["className"] = className,
            ["groups"] = new JsonArray(new JsonObject { ["events"] = Events.Array(Events.Make("AccountOpened", new { owner = "a" })) }),
        };
        using var exec = new HostProcess("exec");
        exec.Read(Timeout);
        exec.Send("load", new JsonObject { ["assemblyId"] = "innocent/bank", ["assembly"] = bank }, 1);
        exec.Send("load", new JsonObject { ["assemblyId"] = "offender/loop", ["assembly"] = loop }, 2);
        exec.Send("batch", new JsonObject
        {
            ["items"] = new JsonArray(Item("innocent/bank", "BankAccount.AccountReducer"), Item("offender/loop", "Escape.EscapeReducer"), Item("innocent/bank", "BankAccount.AccountReducer")),
        }, 3);
        exec.Flush();
        // Each load and the batch say when they start: a host found dead after that line was running them.
        foreach (var id in new[] { 1, 2 })
        {
            Assert.Equal(new JsonObject { ["id"] = id, ["type"] = "started" }.ToJsonString(), exec.Read(Timeout, skipStarted: false)!.ToJsonString());
            Assert.True(exec.Read(Timeout, skipStarted: false)!["payload"]!["ok"]!.GetValue<bool>());
        }
        Assert.Equal("started", exec.Read(Timeout, skipStarted: false)!["type"]!.GetValue<string>());
        var first = exec.Read(Timeout)!;
        Assert.Equal("item", first["type"]!.GetValue<string>());
        Assert.Equal(3, first["id"]!.GetValue<int>());
        Assert.Equal(0, first["payload"]!["index"]!.GetValue<int>());
        Assert.True(first["payload"]!["result"]!["results"]![0]!["ok"]!.GetValue<bool>());
        // Item 1 spins: nothing more comes.
        Assert.Null(exec.Read(TimeSpan.FromMilliseconds(750)));
        exec.Process.Kill();
        Assert.True(exec.Process.WaitForExit(10_000));
    }
}
