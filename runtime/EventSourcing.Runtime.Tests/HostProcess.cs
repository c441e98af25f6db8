using System.Diagnostics;
using System.Text;
using System.Text.Json.Nodes;

namespace EventSourcing.Runtime.Tests;

/// <summary>Starts the built host as a child process and talks to it over stdio, as the TypeScript side does.</summary>
public sealed class HostProcess : IDisposable
{
    readonly Process _process;
    readonly StringBuilder _stderr = new();

    public HostProcess(string mode, IDictionary<string, string>? env = null)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            StandardOutputEncoding = new UTF8Encoding(false),
        };
        psi.ArgumentList.Add(HostDll);
        psi.ArgumentList.Add("--mode");
        psi.ArgumentList.Add(mode);
        foreach (var (k, v) in env ?? new Dictionary<string, string>()) psi.Environment[k] = v;
        _process = Process.Start(psi)!;
        _process.ErrorDataReceived += (_, e) =>
        {
            lock (_stderr) _stderr.AppendLine(e.Data);
        };
        _process.BeginErrorReadLine();
        // UTF-8 without BOM, '\n' line ends.
        Input = new StreamWriter(_process.StandardInput.BaseStream, new UTF8Encoding(false)) { NewLine = "\n", AutoFlush = false };
    }

    public StreamWriter Input { get; }
    public Process Process => _process;

    public string Stderr
    {
        get
        {
            lock (_stderr) return _stderr.ToString();
        }
    }

    /// <summary>The host's framework-dependent build output (same configuration as the tests), or runtime/bin.</summary>
    public static string HostDll
    {
        get
        {
            var config = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Release{Path.DirectorySeparatorChar}") ? "Release" : "Debug";
            foreach (var candidate in new[]
                     {
                         Path.Combine(Repo.Runtime, "EventSourcing.Runtime", "bin", config, "net10.0", "EventSourcing.Runtime.dll"),
                         Path.Combine(Repo.Runtime, "bin", "EventSourcing.Runtime.dll"),
                     })
            {
                if (File.Exists(candidate)) return candidate;
            }
            throw new FileNotFoundException("host not built");
        }
    }

    public void Send(string type, JsonObject payload, int id) =>
        Input.Write(new JsonObject { ["id"] = id, ["type"] = type, ["payload"] = payload }.ToJsonString() + "\n");

    public void Flush() => Input.Flush();

    /// <summary>Reads one response line, or null on EOF / timeout. The "started" lines of load and batch requests are
    /// skipped unless <paramref name="skipStarted"/> is false.</summary>
    public JsonObject? Read(TimeSpan timeout, bool skipStarted = true)
    {
        while (true)
        {
            var task = _process.StandardOutput.ReadLineAsync();
            if (!task.Wait(timeout)) return null;
            if (task.Result is null) return null;
            var line = JsonNode.Parse(task.Result)!.AsObject();
            if (skipStarted && line["type"]!.GetValue<string>() == "started") continue;
            return line;
        }
    }

    public Task<string?> ReadLineAsync() => _process.StandardOutput.ReadLineAsync();

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited) _process.Kill(entireProcessTree: true);
            _process.WaitForExit(5000);
        }
        catch (InvalidOperationException)
        {
        }
        _process.Dispose();
    }
}
