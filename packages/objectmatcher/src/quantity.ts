/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `1e3`). The API server parses every quantity field
 * and stores it in canonical form, so `cpu: 0.5` comes back as `500m` and `memory: 1024Mi` as `1Gi`.
 * Comparing declared and live quantities as strings would flap forever; we compare exact values.
 *
 * Values are kept exact (bigint mantissa × 10^exponent): binary suffixes are powers of 1024, which are
 * integers, so every quantity is an exact decimal.
 */

const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const DECIMAL_SUFFIX_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX).map(([suffix, exp]) => [exp, suffix]));
const BINARY_SUFFIX_BY_POWER = new Map(Object.entries(BINARY_SUFFIX).map(([suffix, power]) => [power, suffix]));

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(.*)$/;
const EXPONENT = /^[eE]([+-]?\d+)$/;

export const QuantityFormat = {
  DecimalSI: "DecimalSI",
  BinarySI: "BinarySI",
  DecimalExponent: "DecimalExponent",
} as const;
export type QuantityFormat = (typeof QuantityFormat)[keyof typeof QuantityFormat];

/** An exact quantity: `mantissa × 10^exponent`, mantissa without trailing zeros (0 has exponent 0). */
export interface Quantity {
  readonly mantissa: bigint;
  readonly exponent: number;
  /** The notation it was written in; the API server keeps it when re-serialising. */
  readonly format: QuantityFormat;
}

export function parseQuantity(input: unknown): Quantity | undefined {
  if (typeof input === "number") {
    if (!Number.isFinite(input)) return undefined;
    input = String(input);
  }
  if (typeof input !== "string") return undefined;
  const match = QUANTITY.exec(input);
  if (!match) return undefined;
  const [, sign = "", number = "", suffix = ""] = match;
  const [whole = "", fraction = ""] = number.split(".");
  let mantissa = BigInt((whole || "0") + fraction);
  let exponent = -fraction.length;
  let format: QuantityFormat = QuantityFormat.DecimalSI;
  const binary = BINARY_SUFFIX[suffix];
  const decimal = DECIMAL_SUFFIX[suffix];
  if (binary !== undefined) {
    mantissa *= 1024n ** BigInt(binary);
    format = QuantityFormat.BinarySI;
  } else if (decimal !== undefined) {
    exponent += decimal;
  } else {
    const exp = EXPONENT.exec(suffix);
    if (!exp) return undefined;
    exponent += Number(exp[1]);
    format = QuantityFormat.DecimalExponent;
  }
  if (sign === "-") mantissa = -mantissa;
  return normalize(mantissa, exponent, format);
}

function normalize(mantissa: bigint, exponent: number, format: QuantityFormat): Quantity {
  if (mantissa === 0n) return { mantissa, exponent: 0, format };
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  return { mantissa, exponent, format };
}

/** True when both parse as quantities of the same value (`0.5` = `500m`, `1024Mi` = `1Gi`). */
export function quantitiesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return parseQuantity(a) !== undefined;
  const ka = valueKey(a);
  return ka !== undefined && ka === valueKey(b);
}

// A cluster uses few distinct quantity spellings and compares them on every pass: remember them.
const VALUE_KEY_CACHE_SIZE = 4096;
const valueKeys = new Map<string | number, string | null>();

function valueKey(input: unknown): string | undefined {
  if (typeof input !== "string" && typeof input !== "number") return undefined;
  let key = valueKeys.get(input);
  if (key === undefined) {
    const q = parseQuantity(input);
    key = q ? `${q.mantissa}e${q.exponent}` : null;
    if (valueKeys.size >= VALUE_KEY_CACHE_SIZE) valueKeys.clear();
    valueKeys.set(input, key);
  }
  return key ?? undefined;
}

/**
 * The string the API server would store for a quantity (Go's `Quantity.String()`): binary notation
 * for whole multiples of 1024 written with a binary suffix, otherwise the largest SI suffix that
 * keeps an integer mantissa. Used for rendering and tests; comparison uses exact values.
 */
export function canonicalQuantity(input: unknown): string | undefined {
  const q = parseQuantity(input);
  if (!q) return undefined;
  if (q.mantissa === 0n) return "0";
  if (q.format === QuantityFormat.BinarySI && q.exponent >= 0) {
    let value = q.mantissa * 10n ** BigInt(q.exponent);
    const abs = value < 0n ? -value : value;
    if (abs >= 1024n) {
      let power = 0;
      while (value % 1024n === 0n && power < 6) {
        value /= 1024n;
        power++;
      }
      return `${value}${BINARY_SUFFIX_BY_POWER.get(power) ?? ""}`;
    }
  }
  let { mantissa, exponent } = q;
  // Go rounds anything finer than nano up to the next nano.
  if (exponent < -9) {
    const scale = 10n ** BigInt(-9 - exponent);
    const rounded = mantissa / scale + (mantissa % scale === 0n ? 0n : mantissa > 0n ? 1n : 0n);
    return canonicalQuantity(`${rounded}n`);
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  if (q.format === QuantityFormat.DecimalExponent) return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
  while (exponent > 18) {
    mantissa *= 1000n;
    exponent -= 3;
  }
  return `${mantissa}${DECIMAL_SUFFIX_BY_EXPONENT.get(exponent) ?? ""}`;
}
