// want: {"source": "https://mirror2.example.com/rates.json", "attempts": 3, "failures": ["not_found", "not_found"], "usd": "108.00 USD"}
const mirrors = [
  "https://api.example.com/rates.json",
  "https://mirror1.example.com/rates.json",
  "https://mirror2.example.com/rates.json",
];
let rates = null;
let source = null;
let attempts = 0;
const failures = [];
for (const url of mirrors) {
  attempts++;
  try {
    rates = await tools.fetch_json({ url });
    source = url;
    break;
  } catch (err) {
    failures.push(err.kind);
  }
}
if (!rates) throw new Error("no mirror answered");
const usd = (100 * rates.rates.USD).toFixed(2);
return { source, attempts, failures, usd: `${usd} USD` };
