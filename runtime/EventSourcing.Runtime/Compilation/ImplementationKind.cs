namespace EventSourcing.Runtime.Compilation;

public enum ImplementationKind { Reducer, Projection }
