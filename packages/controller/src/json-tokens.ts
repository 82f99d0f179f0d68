/**
 * The size of a JSON text's parse, told without parsing it. JSON.parse turns `[{},{},…]` into ~22 bytes
 * of heap per byte of text (3 MiB → 67 MiB) and a long string into about its own size: what a parse costs
 * follows the number of tokens that each become a heap object or slot, not the byte size.
 */

const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const openBrace = 0x7b;
const openBracket = 0x5b;

/**
 * True when `text` holds more than `max` tokens: objects, arrays, strings (keys included), and commas
 * (one per element or member after a container's first). Stops reading once past `max`.
 */
export function jsonTokensExceed(text: Uint8Array, max: number): boolean {
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === backslash) i++;
      else if (byte === quote) inString = false;
      continue;
    }
    if (byte === quote) inString = true;
    else if (byte !== comma && byte !== openBrace && byte !== openBracket) continue;
    if (++count > max) return true;
  }
  return false;
}
