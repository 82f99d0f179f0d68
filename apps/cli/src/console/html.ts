/**
 * HTML built by a tagged template that escapes every interpolated value: names, messages and sources
 * come from tenants and repositories, so `<script>` in a sync's name or an error message is text, never
 * markup. Only `Html` values (built here) pass through unescaped.
 */

export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

type Value = string | number | Html | readonly Value[] | undefined | null | false;

const entities: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  // The live view goes out as server-sent events, where a raw carriage return ends a line.
  "\r": "&#13;",
};

/** Text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\r]/g, (c) => entities[c] ?? c);
}

function render(value: Value): string {
  if (value === undefined || value === null || value === false) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Value[]).map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly Value[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? "")));
  return new Html(out);
}

/** A query string or path segment inside an href, escaped for the attribute too. */
export function urlPart(text: string): string {
  return encodeURIComponent(text);
}
