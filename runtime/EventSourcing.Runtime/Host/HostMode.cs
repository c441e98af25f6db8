namespace EventSourcing.Runtime.Host;

/// <summary>Which request types a host process serves.</summary>
[Flags]
public enum HostMode
{
    /// <summary>Shared compiler: compile (+ ping, stats). Never loads tenant code.</summary>
    Compile = 1,

    /// <summary>Executor: load, unload, apply, resolveKeys, batch (+ ping, stats). Shared by many tenants' assemblies.</summary>
    Exec = 2,

    /// <summary>Everything (development and tests).</summary>
    All = Compile | Exec,
}
