// The DOM helpers every page module uses, defined once. Text goes in as text (textContent,
// text nodes): nothing from a report or the engine is parsed as HTML.

/** The element with this id. */
export const $ = (id) => document.getElementById(id);

/** A new `tag` element with `props` assigned (textContent, className, id, …) and `children`
 *  (elements or strings, which stay text) appended. */
export function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/** Offer `blob` as a download named `filename`. */
export function save(blob, filename) {
  const a = el('a', { href: URL.createObjectURL(blob), download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has the file once the click is handled; the URL can go a little later.
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
