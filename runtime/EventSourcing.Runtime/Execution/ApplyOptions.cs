namespace EventSourcing.Runtime.Execution;

/// <summary>What a caller asks of one group of an apply (runtime/protocol.json: apply.maxStateBytes, groups[].lastStateOnly).</summary>
/// <param name="MaxStateBytes">A state whose JSON is longer fails its event with STATE_TOO_LARGE.</param>
/// <param name="LastStateOnly">Only the state after the last applied event is written (every state is still checked).</param>
/// <param name="MaxResultBytes">Once the response is this long, a group stops before writing its next state (never before its
/// first) and is marked truncated: the caller applies the rest in another call. Bounds a response of many big states.</param>
/// <param name="Key">groups[].key: the lane's state key; a projection implementing IResolveKeys is applied with it.</param>
public readonly record struct ApplyOptions(int MaxStateBytes, bool LastStateOnly = false, long MaxResultBytes = long.MaxValue, string? Key = null);
