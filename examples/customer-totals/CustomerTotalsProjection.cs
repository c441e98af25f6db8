using System.Collections.Generic;
using System.Linq;
using EventSourcing;

namespace CustomerTotals
{
    public sealed class CustomerTotals
    {
        public string CustomerId { get; set; } = "";
        public int OrderCount { get; set; }
        public decimal TotalAmount { get; set; }
        /// <summary>Amount per order id, so later ItemAdded/OrderCancelled events of an order can be attributed.</summary>
        public Dictionary<string, decimal> Orders { get; set; } = new();
    }

    public sealed record Line(string Sku, int Qty, decimal Price);
    public sealed record OrderPlaced(string CustomerId, List<Line> Lines);
    public sealed record ItemAdded(string Sku, int Qty, decimal Price, string? CustomerId);
    public sealed record OrderCancelled(string? Reason, string? CustomerId);

    /// <summary>
    /// Totals per customer across all their orders (spans aggregates: the key is the customer id,
    /// not the order id). Only OrderPlaced carries the customer id for sure; ItemAdded/OrderCancelled
    /// count only when their data names the customer too (events of other aggregate types are ignored).
    /// </summary>
    [ProjectionName("customer-totals")]
    public sealed class CustomerTotalsProjection : IProjection<CustomerTotals>
    {
        public string? ResolveKey(Event e)
        {
            if (e.AggregateType != "order") return null;
            return e.EventType switch
            {
                "OrderPlaced" => e.DataAs<OrderPlaced>().CustomerId,
                "ItemAdded" => e.DataAs<ItemAdded>().CustomerId,
                "OrderCancelled" => e.DataAs<OrderCancelled>().CustomerId,
                _ => null,
            };
        }

        public CustomerTotals Apply(CustomerTotals state, Event e)
        {
            switch (e.EventType)
            {
                case "OrderPlaced":
                {
                    var placed = e.DataAs<OrderPlaced>();
                    var amount = placed.Lines.Sum(l => l.Qty * l.Price);
                    state.CustomerId = placed.CustomerId;
                    if (state.Orders.TryAdd(e.AggregateId, amount))
                    {
                        state.OrderCount++;
                        state.TotalAmount += amount;
                    }
                    break;
                }
                case "ItemAdded":
                {
                    var item = e.DataAs<ItemAdded>();
                    var amount = item.Qty * item.Price;
                    if (state.Orders.TryGetValue(e.AggregateId, out var current))
                    {
                        state.Orders[e.AggregateId] = current + amount;
                        state.TotalAmount += amount;
                    }
                    break;
                }
                case "OrderCancelled":
                    if (state.Orders.Remove(e.AggregateId, out var cancelled))
                    {
                        state.OrderCount--;
                        state.TotalAmount -= cancelled;
                    }
                    break;
            }
            return state;
        }
    }
}
