namespace EventSourcing.Runtime.Host;

/// <summary>Logs go to stderr only: stdout carries nothing but protocol lines.</summary>
public static class Log
{
    static readonly TextWriter Err = CreateErr();
    // Process-wide on purpose: stderr is the process's; both are fixed at start (tenant code cannot reach this assembly).
    public static bool Verbose { get; } = Environment.GetEnvironmentVariable("EVENTSOURCING_RUNTIME_VERBOSE") == "1";

    static TextWriter CreateErr()
    {
        var w = new StreamWriter(Console.OpenStandardError(), new System.Text.UTF8Encoding(false)) { AutoFlush = true };
        return TextWriter.Synchronized(w);
    }

    public static void Info(string message)
    {
        if (Verbose) Err.WriteLine($"[runtime] {message}");
    }

    public static void Error(string message) => Err.WriteLine($"[runtime] error: {message}");
}
