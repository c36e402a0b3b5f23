// The one message both sides of the messaging bench send: an order confirmation as a shop sends
// it, a text part and an HTML part (0.4 and 1.2 KB; ~3 KB on the wire, signed), one recipient,
// DKIM-signed with the same 2048-bit key. Only the Message-ID and the order number differ.

export const FROM = { name: 'Shop', address: 'noreply@shop.example' };
export const DKIM_DOMAIN = 'shop.example';
export const DKIM_SELECTOR = 'bench';

const rows = Array.from({ length: 12 }, (_, i) => ({ item: `Item ${i + 1}`, qty: (i % 3) + 1, price: 4.5 + i }));

/** Subject, text and HTML of order `n`, sent to `to`. */
export function orderMail(n) {
  const lines = rows.map((r) => `${r.qty} × ${r.item.padEnd(12)} ${(r.qty * r.price).toFixed(2)} EUR`);
  const cells = rows.map(
    (r) =>
      `<tr><td>${r.item}</td><td>${r.qty}</td><td style="text-align:right">${(r.qty * r.price).toFixed(2)} €</td></tr>`
  );
  const order = 100000 + n;
  return {
    to: `customer${n % 100}@example.org`,
    subject: `Your order ${order} is confirmed`,
    text: `Hello,\n\nthank you for your order ${order}.\n\n${lines.join('\n')}\n\nWe will write again when it ships.\n`,
    html:
      `<!doctype html><html><body style="font-family:sans-serif"><h1>Thank you for your order ${order}</h1>`
      + `<table style="border-collapse:collapse">${cells.join('')}</table>`
      + '<p>We will write again when it ships.</p><p style="color:#888">Shop · 1 Example Street · Example City</p>'
      + '</body></html>',
  };
}
