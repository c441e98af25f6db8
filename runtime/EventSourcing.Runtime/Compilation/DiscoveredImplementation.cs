namespace EventSourcing.Runtime.Compilation;

/// <summary>A reducer or projection found in a compiled archive.</summary>
/// <param name="ClassName">Full metadata name (namespace + nested types joined with '+'), usable with Assembly.GetType.</param>
/// <param name="StateTypeName">The state type of its IReducer&lt;T&gt; / IProjection&lt;T&gt;.</param>
/// <param name="Kind">Reducer or projection.</param>
/// <param name="AggregateType">A reducer's aggregate type ([AggregateType], else derived from the class name).</param>
/// <param name="ProjectionName">A projection's name ([ProjectionName], else derived from the class name).</param>
public sealed record DiscoveredImplementation(
    string ClassName,
    string StateTypeName,
    ImplementationKind Kind,
    string? AggregateType,
    string? ProjectionName);
