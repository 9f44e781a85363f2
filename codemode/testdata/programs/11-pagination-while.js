// want: {"pages": 3, "orders": 5, "total": 7544, "largest": "o3"}
let url = "https://api.example.com/orders?page=1";
let pages = 0;
const orders = [];
while (url) {
  const page = await tools.fetch_json({ url });
  pages++;
  orders.push(...page.orders);
  url = page.next;
}
const total = orders.reduce((sum, o) => sum + o.total, 0);
const largest = orders.reduce((best, o) => (o.total > best.total ? o : best));
return { pages, orders: orders.length, total, largest: largest.id };
