/**
 * Reading one field of a JSON document from its text without parsing the document. An informer
 * gets back, as a watch event, every object it has just written itself; recognising that echo by
 * its resourceVersion and dropping it unparsed saves most of the cost of receiving it. A writer of a
 * megabyte object that needs only its new metadata reads just that.
 *
 * The scan follows JSON's structure (strings, nesting), so a key or value that merely looks like
 * `"resourceVersion"` inside a label, an annotation or a nested object is never taken for the
 * object's own. Anything unexpected answers undefined, and the caller parses the event as usual.
 */

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const colon = 0x3a;
const comma = 0x2c;

/** The API server writes a watch event's type first; other layouts are simply not peeked. */
const addedStart = '{"type":"ADDED","object":';
const modifiedStart = '{"type":"MODIFIED","object":';

/**
 * For an ADDED or MODIFIED event line, its object's metadata.resourceVersion; undefined for other
 * events or when the text is not laid out as the API server writes it.
 */
export function peekWatchEventVersion(line: string): string | undefined {
  let start: number;
  if (line.startsWith(addedStart)) start = addedStart.length;
  else if (line.startsWith(modifiedStart)) start = modifiedStart.length;
  else return undefined;
  const metadata = memberValue(line, start, "metadata");
  if (metadata === undefined) return undefined;
  const version = memberValue(line, metadata, "resourceVersion");
  if (version === undefined || line.charCodeAt(version) !== quote) return undefined;
  const end = stringEnd(line, version);
  if (end === undefined) return undefined;
  const raw = line.slice(version + 1, end);
  // resourceVersions are plain (etcd revisions); one with an escape is left to the parser.
  return raw.includes("\\") ? undefined : raw;
}

/**
 * Where the JSON text of a top-level member of the object in `text` is (say, the metadata of a
 * large object whose body the caller does not need), or undefined when it is absent or the text is
 * not well-formed. Scanned on the Latin-1 decoding of bytes, the indices are byte offsets, so only
 * that range needs decoding as UTF-8.
 */
export function peekMemberRange(text: string, key: string): { start: number; end: number } | undefined {
  const start = memberValue(text, 0, key);
  if (start === undefined) return undefined;
  const end = skipValue(text, start);
  return end === undefined ? undefined : { start, end };
}

/**
 * Where the value of `key` starts in the object at `at` (its own members only, not nested ones),
 * or undefined when it has no such member or the text is not well-formed.
 */
function memberValue(text: string, at: number, key: string): number | undefined {
  let pos = skipSpace(text, at);
  if (text.charCodeAt(pos) !== openBrace) return undefined;
  pos = skipSpace(text, pos + 1);
  if (text.charCodeAt(pos) === closeBrace) return undefined;
  for (;;) {
    if (text.charCodeAt(pos) !== quote) return undefined;
    const keyEnd = stringEnd(text, pos);
    if (keyEnd === undefined) return undefined;
    // Compared raw: a key written with escapes is not one of the plain keys asked for here.
    const isKey = keyEnd - pos - 1 === key.length && text.startsWith(key, pos + 1);
    pos = skipSpace(text, keyEnd + 1);
    if (text.charCodeAt(pos) !== colon) return undefined;
    pos = skipSpace(text, pos + 1);
    if (isKey) return pos;
    const valueEnd = skipValue(text, pos);
    if (valueEnd === undefined) return undefined;
    pos = skipSpace(text, valueEnd);
    const next = text.charCodeAt(pos);
    if (next === closeBrace) return undefined;
    if (next !== comma) return undefined;
    pos = skipSpace(text, pos + 1);
  }
}

/** The index of the quote closing the string that opens at `at`. */
function stringEnd(text: string, at: number): number | undefined {
  let from = at + 1;
  for (;;) {
    const end = text.indexOf('"', from);
    if (end === -1) return undefined;
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    for (let i = end - 1; i > at && text.charCodeAt(i) === backslash; i--) backslashes++;
    if (backslashes % 2 === 0) return end;
    from = end + 1;
  }
}

/** The index just past the value that starts at `at`. */
function skipValue(text: string, at: number): number | undefined {
  const first = text.charCodeAt(at);
  if (first === quote) {
    const end = stringEnd(text, at);
    return end === undefined ? undefined : end + 1;
  }
  if (first === openBrace || first === openBracket) {
    // Nesting is counted, strings jumped over: brackets inside strings do not count.
    let depth = 0;
    for (let pos = at; pos < text.length; pos++) {
      const c = text.charCodeAt(pos);
      if (c === quote) {
        const end = stringEnd(text, pos);
        if (end === undefined) return undefined;
        pos = end;
      } else if (c === openBrace || c === openBracket) {
        depth++;
      } else if (c === closeBrace || c === closeBracket) {
        depth--;
        if (depth === 0) return pos + 1;
      }
    }
    return undefined;
  }
  // A number, true, false or null: up to the next delimiter.
  let pos = at;
  while (pos < text.length) {
    const c = text.charCodeAt(pos);
    if (c === comma || c === closeBrace || c === closeBracket || isSpace(c)) break;
    pos++;
  }
  return pos === at ? undefined : pos;
}

function skipSpace(text: string, at: number): number {
  let pos = at;
  while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++;
  return pos;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
