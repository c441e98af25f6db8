using System;
using System.Collections.Immutable;
using System.Linq;
using EventSourcing;

namespace Orders
{
    // No [AggregateType] attribute: "OrderReducer" less "Reducer", lower-cased → "order".
    public sealed class OrderReducer : IReducer<OrderState>
    {
        public OrderState Apply(OrderState state, Event e) => e.EventType switch
        {
            "OrderPlaced" => Placed(e.DataAs<OrderPlaced>()),
            "ItemAdded" when state.Status == OrderStatus.Placed => AddItem(state, e.DataAs<ItemAdded>()),
            "ItemAdded" => throw new InvalidOperationException($"cannot add items to an order that is {state.Status}"),
            "OrderShipped" => state with { Status = OrderStatus.Shipped, TrackingNumber = e.DataAs<OrderShipped>().TrackingNumber },
            "OrderCancelled" when state.Status != OrderStatus.Shipped =>
                state with { Status = OrderStatus.Cancelled, CancelReason = e.DataAs<OrderCancelled>().Reason },
            "OrderCancelled" => throw new InvalidOperationException("a shipped order cannot be cancelled"),
            _ => state,
        };

        private static OrderState Placed(OrderPlaced placed) => new()
        {
            CustomerId = placed.CustomerId,
            Status = OrderStatus.Placed,
            // Merge duplicate SKUs, keeping the first price seen.
            Lines = placed.Lines
                .GroupBy(l => l.Sku)
                .Select(g => new OrderLine(g.Key, g.Sum(l => l.Qty), g.First().Price))
                .ToImmutableList(),
        };

        private static OrderState AddItem(OrderState state, ItemAdded item)
        {
            var existing = state.Lines.FirstOrDefault(l => l.Sku == item.Sku);
            var lines = existing is null
                ? state.Lines.Add(new OrderLine(item.Sku, item.Qty, item.Price))
                : state.Lines.Replace(existing, existing with { Qty = existing.Qty + item.Qty });
            return state with { Lines = lines };
        }
    }
}
