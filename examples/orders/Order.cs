using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Text.Json.Serialization;

namespace Orders
{
    // Enums are written as numbers by default; this attribute writes them as strings ("Placed").
    [JsonConverter(typeof(JsonStringEnumConverter<OrderStatus>))]
    public enum OrderStatus { None, Placed, Shipped, Cancelled }

    public sealed record OrderLine(string Sku, int Qty, decimal Price)
    {
        public decimal Total => Qty * Price;
    }

    /// <summary>Immutable order state: every Apply returns a new value (records + with-expressions).</summary>
    public sealed record OrderState
    {
        public string CustomerId { get; init; } = "";
        public OrderStatus Status { get; init; } = OrderStatus.None;
        public ImmutableList<OrderLine> Lines { get; init; } = ImmutableList<OrderLine>.Empty;
        public decimal Total => Lines.Sum(l => l.Total);
        public int ItemCount => Lines.Sum(l => l.Qty);
        public string? CancelReason { get; init; }
        public string? TrackingNumber { get; init; }

        public IEnumerable<string> Skus => Lines.Select(l => l.Sku).Distinct().OrderBy(s => s, System.StringComparer.Ordinal);
    }

    // Event data shapes.
    public sealed record OrderPlaced(string CustomerId, List<OrderLine> Lines);
    public sealed record ItemAdded(string Sku, int Qty, decimal Price);
    public sealed record OrderShipped(string? TrackingNumber);
    public sealed record OrderCancelled(string? Reason);
}
