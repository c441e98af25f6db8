using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Security.Cryptography;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.Emit;
using Microsoft.CodeAnalysis.Text;

namespace EventSourcing.Runtime.Compilation;

/// <summary>A reducer or projection found in a compiled archive.</summary>
/// <param name="ClassName">Full metadata name (namespace + nested types joined with '+'), usable with Assembly.GetType.</param>
public sealed record DiscoveredImplementation(
    string ClassName,
    string StateTypeName,
    ImplementationKind Kind,
    string? AggregateType,
    string? ProjectionName);
