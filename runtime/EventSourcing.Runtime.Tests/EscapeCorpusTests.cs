using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;

namespace EventSourcing.Runtime.Tests;

/// <summary>
/// runtime/escape-corpus/*.cs: one escape attempt per file, with a header line
/// <c>// expect: compile-error &lt;substring&gt;</c>, <c>// expect: runtime-contained</c> (compiles; its call fails or its executor is
/// killed, and others keep being served) or <c>// expect: runtime-isolated</c> (compiles and runs; loaded beside another
/// tenant's assembly in one executor it sees nothing of it: test/runtime/shared-executors.int-spec.ts).
/// The TypeScript side runs the same corpus end to end.
/// </summary>
public class EscapeCorpusTests
{
    public static TheoryData<string> Files()
    {
        var data = new TheoryData<string>();
        foreach (var f in Directory.GetFiles(Repo.EscapeCorpus, "*.cs").OrderBy(f => f, StringComparer.Ordinal))
            data.Add(Path.GetFileName(f));
        return data;
    }

    public static (string Kind, string? Substring) Expectation(string source)
    {
        var line = source.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith("// expect:", StringComparison.Ordinal))
                   ?? throw new InvalidOperationException("no '// expect:' header");
        var rest = line["// expect:".Length..].Trim();
        if (rest is "runtime-contained" or "runtime-isolated") return (rest, null);
        const string prefix = "compile-error ";
        if (rest.StartsWith(prefix, StringComparison.Ordinal)) return ("compile-error", rest[prefix.Length..].Trim());
        throw new InvalidOperationException("bad expectation: " + rest);
    }

    [Theory]
    [MemberData(nameof(Files))]
    public void CorpusFileBehavesAsItsHeaderSays(string file)
    {
        var source = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, file));
        var (kind, substring) = Expectation(source);
        var host = new InProcessHost(HostMode.Compile);
        var result = host.Compile(file, source, kind: source.Contains("IProjection<", StringComparison.Ordinal) ? "projection" : "reducer");
        var ok = result["ok"]!.GetValue<bool>();
        if (kind == "compile-error")
        {
            Assert.False(ok, $"{file} compiled but should have been refused");
            var text = result["compilationError"]!.GetValue<string>();
            Assert.True(text.Contains(substring!, StringComparison.Ordinal), $"{file}: expected \"{substring}\" in:\n{text}");
            // Every refusal must be readable: each diagnostic line says what and (for ours) why.
            Assert.DoesNotContain("no implementation of", text);
        }
        else
        {
            Assert.True(ok, $"{file}: {result["compilationError"]}");
        }
    }

    [Fact]
    public void CorpusCoversTheRequiredAttempts()
    {
        var names = Directory.GetFiles(Repo.EscapeCorpus, "*.cs").Select(Path.GetFileNameWithoutExtension).ToHashSet();
        foreach (var required in new[]
                 {
                     "file-read", "socket", "process-start", "env-var", "type-gettype", "create-delegate", "reflection-private-field",
                     "thread", "task-run", "failfast", "string-intern", "dllimport", "unsafe-code", "dynamic", "datetime-now", "random",
                     "guid-newguid", "static-mutable-field", "module-initializer", "console", "infinite-loop", "unbounded-recursion",
                     "huge-array", "catastrophic-regex",
                     // Issue 10: the exploit itself, the string-literal mutation, and every compiler-only API in the places
                     // the old verifier trusted by name (lambdas, closures, iterators, local functions in closures).
                     "unsafe-as-exploit", "string-literal-mutation", "string-literal-mutation-iterator",
                     "runtime-type-handle-from-intptr", "runtime-field-handle-value", "memory-pin", "buffer-memorycopy",
                     // Issue 12: one tenant's code reaching another's in a shared executor, with and without reflection.
                     "cross-tenant-type-gettype", "cross-tenant-load-context", "cross-tenant-appdomain", "cross-tenant-assembly-of-type",
                     "cross-tenant-generic-static", "cross-tenant-static-readonly", "cross-tenant-thread-static", "cross-tenant-finalizer",
                     "cross-tenant-exception-data", "cross-tenant-json-converter-relay", "cross-tenant-event-kept", "cross-tenant-weak-table",
                     "cross-tenant-same-names", "cross-tenant-generic-sdk", "cross-tenant-event-shared",
                     // Issue 22: finding 1 (a Decoder handed a pooled array) and the red team of the derivation allowlist.
                     "derive-decoder-pooled-buffer", "derive-encoder", "derive-stream", "derive-text-writer", "derive-hash-algorithm",
                     "derive-buffer-writer", "derive-json-converter-read", "derive-comparer-sort", "derive-regex-runner", "derive-enumerable-consumers",
                     "derive-collection-copyto", "derive-finalizer-comparer", "derive-static-constructor", "derive-json-encoder",
                     "derive-decoder-fallback", "derive-alternate-comparer", "derive-memory-manager", "derive-shadowed-virtual",
                     // Issue 22 red team: attacks on the three changes (allowlist, pool hygiene, tenant memory).
                     "memory-regex-cache", "memory-generic-expansion", "memory-oom-message-frame",
                     "memory-late-converter", "derive-format-provider", "derive-json-converter-writer-reset",
                     // Issue 27 (gen slice): hand-writing what only the source generators may write, the APIs their output uses,
                     // static JSON options, XxHash.
                     "generator-json-hand-written-context", "generator-json-context-own-field", "generator-json-context-cache-overwrite",
                     "generator-json-context-subclass", "generator-json-metadata-callback", "generator-json-metadata-services",
                     "generator-json-resolver-by-hand", "generator-appcontext-getdata", "generator-type-getproperty", "generator-regex-line-spoof",
                     "generator-regex-generated-namespace", "generator-static-options-mutated", "generator-static-options-in-collection",
                     "generator-context-options-mutated", "generator-shared-executor", "xxhash-instance-state", "xxhash-shared-executor",
                 })
            Assert.Contains(required, names);
        foreach (var api in new[] { "unsafe-as", "unsafe-asref", "unsafe-add", "memory-marshal", "thread-id", "create-span", "initialize-array", "type-handle-value" })
        foreach (var variant in new[] { "lambda", "capturing-lambda", "iterator", "local-function" })
            Assert.Contains($"{api}-{variant}", names);
    }

    [Fact]
    public void RefusalsOfCompilerOnlyApisComeFromTheIlCheckNotFromAMissingReference()
    {
        // A corpus file refused for a typo or a missing reference would pass its substring check for the wrong reason.
        var host = new InProcessHost(HostMode.Compile);
        var checkedFiles = 0;
        foreach (var file in Directory.GetFiles(Repo.EscapeCorpus, "*.cs"))
        {
            var source = File.ReadAllText(file);
            var (kind, substring) = Expectation(source);
            if (kind != "compile-error" || !substring!.StartsWith("ES000", StringComparison.Ordinal)) continue;
            var text = host.Compile(Path.GetFileName(file), source, kind: "reducer")["compilationError"]!.GetValue<string>();
            Assert.False(System.Text.RegularExpressions.Regex.IsMatch(text, @"error CS\d{4}"), $"{Path.GetFileName(file)}: {text}");
            checkedFiles++;
        }
        Assert.True(checkedFiles >= 38, $"only {checkedFiles} corpus files expect an ES000x refusal");
    }

    [Fact]
    public void ForbiddenApiMessagesNameTheApiAndTheReasonWithALocation()
    {
        var source = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "file-read.cs"));
        var result = new InProcessHost(HostMode.Compile).Compile("Evil/file-read.cs", source);
        var text = result["compilationError"]!.GetValue<string>();
        Assert.Contains("Evil/file-read.cs(13,13): error ES0001: forbidden API: System.IO.File.ReadAllText (file system access is not allowed)", text);
    }

    [Fact]
    public void AStateWithRawJsonLineBreaksFailsCleanlyInsteadOfForgingProtocolLines()
    {
        // InProcessHost.Send asserts that every response is exactly one line.
        var host = new InProcessHost(HostMode.All);
        var source = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, "rt-json-raw-newline.cs"));
        host.CompileAndLoad("raw", new[] { new SourceFile("rt-json-raw-newline.cs", source) });
        var r = host.Apply("raw", "Escape.EscapeReducer", (null, Events.Array(Events.Make("X", new { }))))[0]!;
        Assert.False(r["ok"]!.GetValue<bool>());
        Assert.Equal("STATE_SERIALIZATION_FAILED", r["error"]!["code"]!.GetValue<string>());
        Assert.Empty(r["states"]!.AsArray());
    }

    [Theory]
    [InlineData("huge-array.cs", "System.OutOfMemoryException")]
    [InlineData("inline-array-huge.cs", "System.TypeLoadException")]
    public void ContainedAttemptsThatAreSafeInProcessFailCleanlyAndTheHostKeepsWorking(string file, string exceptionType)
    {
        var host = new InProcessHost(HostMode.All);
        var source = File.ReadAllText(Path.Combine(Repo.EscapeCorpus, file));
        host.CompileAndLoad("huge", new[] { new SourceFile(file, source) });
        var results = host.Apply("huge", "Escape.EscapeReducer", (null, Events.Array(Events.Make("X", new { }))));
        var r = results[0]!;
        Assert.False(r["ok"]!.GetValue<bool>());
        Assert.Equal("APPLY_FAILED", r["error"]!["code"]!.GetValue<string>());
        Assert.Equal(exceptionType, r["error"]!["exceptionType"]!.GetValue<string>());
        Assert.True(host.Result("unload", new JsonObject { ["assemblyId"] = "huge" })["wasLoaded"]!.GetValue<bool>());

        // A well-behaved reducer works after the load/unload.
        host.CompileAndLoad("bank", Repo.Example("bank-account"));
        var ok = host.Apply("bank", "BankAccount.AccountReducer", (null, Events.Array(Events.Make("AccountOpened", new { owner = "ann" }))));
        Assert.True(ok[0]!["ok"]!.GetValue<bool>());
    }
}
