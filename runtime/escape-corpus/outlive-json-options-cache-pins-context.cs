// expect: runtime-isolated
// Issue 27 red team (i27-redteam): outlive the upload. System.Text.Json caches each type's metadata per "caching context",
// and every JsonSerializerOptions with default settings (JsonSerializerOptions.Default, used by Serialize(value) with no
// options, and any `new JsonSerializerOptions()`) shares one process-wide context that is never cleared. Serializing one
// tenant type through it inside a call leaves the type (so the tenant's collectible AssemblyLoadContext) referenced from a
// framework static for good: unloading the upload does not collect it, and each load/call/unload cycle adds the metadata
// again (plus the assembly and everything its statics hold).
// HOLE (found, i27-redteam): measured in-process (InProcessHost Exec+Compile; load, one apply, unload, five full GCs):
// AssemblyRegistry.UnloadingCount grows by one per cycle (2, 3, 4 after a warm-up cycle and three more) and never returns to 0 (test/runtime/shared-executors.int-spec.ts
// expects unloadingAssemblies: 0); with memory-json-default-options-metadata.cs (150 types) each cycle leaves ~9.2 MiB live,
// charged to nobody once the tenant's charge is released at unload: 28 MiB after three cycles, unbounded.
// The corpus test only compiles runtime-* files, so it cannot fail on this. Control (a file that serializes nothing): 0.
// CLOSED (issue 28, sec-typeinit; verdict now runtime-isolated: it runs, keeps nothing, and beside the victim in one
// executor sees nothing of it — test/runtime/shared-executors.int-spec.ts): the shared caches are emptied when an upload is unloaded too (JsonSharedCaches.AfterUnload),
// so nothing of the serializer's keeps the load context: unloadingAssemblies is 0 after each cycle
// (JsonSharedCachesTests.AnUploadThatSerializedThroughTheDefaultOptionsIsCollectedAfterItsUnload).
using System.Text.Json;
using EventSourcing;

namespace Escape
{
    public sealed class Note { public string Text { get; set; } = ""; public int Size { get; set; } }

    public sealed class EscapeState { public string Value { get; set; } = ""; public long Count { get; set; } }

    public sealed class EscapeReducer : IReducer<EscapeState>
    {
        public EscapeState Apply(EscapeState state, Event e)
        {
            state.Value = JsonSerializer.Serialize(new Note { Text = "x", Size = 1 }, new JsonSerializerOptions());
            state.Count++;
            return state;
        }
    }
}
