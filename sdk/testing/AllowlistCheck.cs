using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using EventSourcing.Runtime.Compilation;

namespace EventSourcing.Testing
{
    /// <summary>The server's allowlist check (the host's IL verifier, <see cref="AssemblyVerifier"/>, compiled from the
    /// same sources) run on the assembly under test, so that a spec fails locally where an upload would be refused.
    /// <see cref="ReducerSpec{TReducer, TState}"/> and <see cref="ProjectionSpec{TProjection, TState}"/> call it before
    /// running; it checks each assembly once per test run.
    /// <para>Off only with the AppContext switch <c>EventSourcing.Testing.SkipAllowlistCheck</c> (the host's own tests,
    /// whose fixtures live in a test assembly that references xunit).</para></summary>
    public static class AllowlistCheck
    {
        /// <summary>The AppContext switch that turns the check off.</summary>
        public const string SkipSwitch = "EventSourcing.Testing.SkipAllowlistCheck";

        static readonly ConcurrentDictionary<Assembly, IReadOnlyList<string>> Checked = new();

        /// <summary>Throws <see cref="AllowlistViolationException"/> when the server would refuse
        /// <paramref name="assembly"/>.</summary>
        public static void Ensure(Assembly assembly)
        {
            if (AppContext.TryGetSwitch(SkipSwitch, out var skip) && skip) return;
            var refusals = Checked.GetOrAdd(assembly, Check);
            if (refusals.Count > 0) throw new AllowlistViolationException(assembly.GetName().Name ?? "?", refusals);
        }

        /// <summary>Each refusal of the server's check as <c>file(line,col): error CODE: message</c> (the file and line
        /// from the assembly's portable PDB when there is one), or <c>error CODE: message</c>.</summary>
        public static IReadOnlyList<string> Check(Assembly assembly)
        {
            var path = assembly.Location;
            if (string.IsNullOrEmpty(path) || !File.Exists(path))
                throw new InvalidOperationException($"the allowlist check needs {assembly.GetName().Name} as a file on disk");
            var violations = AssemblyVerifier.Verify(File.ReadAllBytes(path));
            if (violations.Count == 0) return Array.Empty<string>();
            using var pdb = OpenPdb(path);
            return violations.Select(v => Format(v, pdb?.GetMetadataReader())).ToArray();
        }

        static string Format(Violation v, MetadataReader? pdb)
        {
            var where = pdb is null || v.Method.IsNil ? null : Locate(pdb, v.Method, v.IlOffset);
            var message = v.Context is null ? v.Message : $"{v.Message} in {v.Context}";
            return where is null ? $"error {v.Code}: {message}" : $"{where}: error {v.Code}: {message}";
        }

        /// <summary>The sequence point covering the IL offset (the last one at or before it), else the method's first.</summary>
        static string? Locate(MetadataReader pdb, MethodDefinitionHandle method, int ilOffset)
        {
            var debug = pdb.GetMethodDebugInformation(MetadataTokens.MethodDebugInformationHandle(MetadataTokens.GetRowNumber(method)));
            SequencePoint? best = null;
            SequencePoint? first = null;
            foreach (var sp in debug.GetSequencePoints())
            {
                if (sp.IsHidden) continue;
                first ??= sp;
                if (sp.Offset <= ilOffset) best = sp;
            }
            best ??= first;
            if (best is null) return null;
            var file = pdb.GetString(pdb.GetDocument(best.Value.Document).Name);
            return $"{file}({best.Value.StartLine},{best.Value.StartColumn})";
        }

        static MetadataReaderProvider? OpenPdb(string assemblyPath)
        {
            var pdbPath = Path.ChangeExtension(assemblyPath, ".pdb");
            if (!File.Exists(pdbPath)) return null;
            try
            {
                var provider = MetadataReaderProvider.FromPortablePdbStream(File.OpenRead(pdbPath));
                provider.GetMetadataReader();
                return provider;
            }
            catch (BadImageFormatException)
            {
                return null; // a Windows PDB: no locations
            }
        }
    }
}
