extern alias testkit;

using System.Collections.Immutable;
using System.Text.Json.Nodes;
using EventSourcing.Runtime.Compilation;
using EventSourcing.Runtime.Host;
using testkit::EventSourcing.Testing;

namespace EventSourcing.Runtime.Tests;

/// <summary>Issue 28: an event's tags on the wire (<c>tags</c>, absent when none) reach tenant code as
/// <see cref="Event.Tags"/>, an immutable list no cast can change; a projection can key by a tag.</summary>
public sealed class TagsTests
{
    const string Source = """
        using System.Collections.Generic;
        using System.Linq;
        using EventSourcing;
        namespace Courses
        {
            public sealed class Seen { public List<string> Tags { get; set; } = new(); public string Attempts { get; set; } = ""; }

            public sealed class TagReducer : IReducer<Seen>
            {
                public Seen Apply(Seen s, Event e)
                {
                    // Each way a tenant might try to change the list it was handed: every one must fail or change nothing.
                    var attempts = new List<string>();
                    try { ((IList<string>)e.Tags)[0] = "forged"; attempts.Add("index-set"); } catch (System.Exception x) { attempts.Add("index-set:" + x.GetType().Name); }
                    try { ((ICollection<string>)e.Tags).Add("forged"); attempts.Add("add"); } catch (System.Exception x) { attempts.Add("add:" + x.GetType().Name); }
                    try { ((ICollection<string>)e.Tags).Clear(); attempts.Add("clear"); } catch (System.Exception x) { attempts.Add("clear:" + x.GetType().Name); }
                    attempts.Add(e.Tags is string[] ? "is-array" : "not-array");
                    attempts.Add(e.Tags is List<string> ? "is-list" : "not-list");
                    s.Tags = e.Tags.ToList();
                    s.Attempts = string.Join(",", attempts);
                    return s;
                }
            }

            public sealed class Enrolment { public int Students { get; set; } }

            /// <summary>Keyed by the value of the event's `course:` tag (null: not a course event).</summary>
            public sealed class CourseProjection : IProjection<Enrolment>
            {
                public string? ResolveKey(Event e) => e.Tags.FirstOrDefault(t => t.StartsWith("course:"))?.Substring("course:".Length);
                public Enrolment Apply(Enrolment s, Event e) { s.Students++; return s; }
            }
        }
        """;

    readonly InProcessHost _host = new(HostMode.Exec | HostMode.Compile);

    static JsonObject Tagged(string eventType, params string[] tags)
    {
        var e = Events.Make(eventType, new { });
        e["tags"] = new JsonArray(tags.Select(t => (JsonNode)JsonValue.Create(t)!).ToArray());
        return e;
    }

    [Fact]
    public void AReducerSeesTheTagsInOrderAndNoCastChangesThem()
    {
        _host.CompileAndLoad("courses", [new SourceFile("Courses.cs", Source)]);
        var withNull = Events.Make("Plain", new { });
        withNull["tags"] = null;
        var r = _host.Apply("courses", "Courses.TagReducer",
            (null, Events.Array(Tagged("StudentSubscribed", "student:ann", "course:7"))),
            (null, Events.Array(Events.Make("Plain", new { }))),
            (null, Events.Array(withNull)));
        var tagged = r[0]!["states"]![0]!;
        Assert.Equal(["student:ann", "course:7"], tagged["tags"]!.AsArray().Select(t => t!.GetValue<string>()));
        Assert.Equal(
            "index-set:NotSupportedException,add:NotSupportedException,clear:NotSupportedException,not-array,not-list",
            tagged["attempts"]!.GetValue<string>());
        // Absent and null: an empty list, never null (the reducer's e.Tags.ToList() did not throw).
        Assert.Empty(r[1]!["states"]![0]!["tags"]!.AsArray());
        Assert.Empty(r[2]!["states"]![0]!["tags"]!.AsArray());
    }

    [Fact]
    public void AProjectionResolvesItsKeyFromATag()
    {
        _host.CompileAndLoad("courses", [new SourceFile("Courses.cs", Source)]);
        var keys = _host.Result("resolveKeys", new JsonObject
        {
            ["assemblyId"] = "courses",
            ["className"] = "Courses.CourseProjection",
            ["events"] = Events.Array(Tagged("StudentSubscribed", "student:ann", "course:7"), Events.Make("Plain", new { }), Tagged("X", "course:8")),
        })["keys"]!.AsArray();
        Assert.Equal("7", keys[0]!.GetValue<string>());
        Assert.Null(keys[1]);
        Assert.Equal("8", keys[2]!.GetValue<string>());
    }

    [Fact]
    public void TagsThatAreNotAnArrayOfStringsAreAnInvalidEvent()
    {
        _host.CompileAndLoad("courses", [new SourceFile("Courses.cs", Source)]);
        var notArray = Events.Make("X", new { });
        notArray["tags"] = "course:7";
        var notStrings = Events.Make("X", new { });
        notStrings["tags"] = new JsonArray(JsonValue.Create(7));
        var r = _host.Apply("courses", "Courses.TagReducer", (null, Events.Array(notArray)), (null, Events.Array(notStrings)));
        Assert.Equal("INVALID_EVENT", r[0]!["error"]!["code"]!.GetValue<string>());
        Assert.Equal("INVALID_EVENT", r[1]!["error"]!["code"]!.GetValue<string>());
    }

    [Fact]
    public void AnEventKeepsAPrivateCopyOfTheTagsItIsGiven()
    {
        var given = new List<string> { "a", "b" };
        var e = new Event { EventType = "X", Tags = given };
        given[0] = "changed";
        given.Add("c");
        Assert.Equal(["a", "b"], e.Tags);
        Assert.IsType<ImmutableArray<string>>(e.Tags);
        Assert.Empty(new Event().Tags);
        Assert.Empty(new Event { Tags = null! }.Tags);
    }

    [Fact]
    public void TheTestKitSetsTags()
    {
        var tags = new[] { "course:7", "student:ann" };
        var e = EventBuilder.Of("StudentSubscribed").WithTags(tags).Build();
        tags[0] = "changed";
        Assert.Equal(["course:7", "student:ann"], e.Tags);
        Assert.Empty(EventBuilder.Of("X").Build().Tags);
        Assert.Throws<ArgumentException>(() => EventBuilder.Of("X").WithTags("a", ""));
    }
}
