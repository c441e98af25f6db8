namespace EventSourcing.Runtime.Tests;

/// <summary>Tests run alone, not beside others: they measure the process's heap and the serializer's process-wide caches.</summary>
[CollectionDefinition(nameof(ProcessWideSerial), DisableParallelization = true)]
public sealed class ProcessWideSerial;
