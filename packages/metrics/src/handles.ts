/**
 * Typed handles over prom-client metrics: the labels a metric takes, and their values, are part
 * of its type, so a wrong label name or an unbounded value is a compile error rather than a
 * cardinality explosion found in production. Metrics without labels take no labels argument.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export type Labels = Readonly<Record<string, string>>;
export type NoLabels = Readonly<Record<never, string>>;

/** `[labels, ...rest]` for a labelled metric, just `rest` for one without labels. */
export type WithLabels<L extends Labels, Rest extends unknown[]> = [keyof L] extends [never]
  ? Rest
  : [labels: L, ...Rest];

export interface CounterHandle<L extends Labels = NoLabels> {
  readonly name: string;
  inc(...args: WithLabels<L, [value?: number]>): void;
  /** Drops one series: what it counted is gone (a deleted sync's). */
  remove(...args: WithLabels<L, []>): void;
  /** Drops every series. */
  reset(): void;
}

export interface GaugeHandle<L extends Labels = NoLabels> {
  readonly name: string;
  set(...args: WithLabels<L, [value: number]>): void;
  inc(...args: WithLabels<L, [value?: number]>): void;
  dec(...args: WithLabels<L, [value?: number]>): void;
  /** Drops one series (labelled gauges only have something to drop). */
  remove(...args: WithLabels<L, []>): void;
  /** Drops every series. */
  reset(): void;
}

export interface HistogramHandle<L extends Labels = NoLabels> {
  readonly name: string;
  observe(...args: WithLabels<L, [seconds: number]>): void;
  /** Starts timing; the returned function observes the elapsed seconds (labels known at the end) and returns them. */
  startTimer(): (...args: WithLabels<L, []>) => number;
  /** Creates a labelled series at 0 observations, so a scrape shows it before the first one. */
  zero(...args: WithLabels<L, []>): void;
  /** Drops every series. */
  reset(): void;
}

export interface MetricSpec<L extends Labels> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly (keyof L & string)[];
}

type PromLabels = Record<string, string>;

function split(args: readonly unknown[]): { labels: PromLabels | undefined; rest: readonly unknown[] } {
  const [first, ...rest] = args;
  if (typeof first === "object" && first !== null) return { labels: { ...(first as PromLabels) }, rest };
  return { labels: undefined, rest: args };
}

function numberArg(rest: readonly unknown[], fallback?: number): number | undefined {
  const value = rest[0];
  return typeof value === "number" ? value : fallback;
}

export function counter<L extends Labels = NoLabels>(registry: Registry, spec: MetricSpec<L>): CounterHandle<L> {
  const metric = new Counter<string>({
    name: spec.name,
    help: spec.help,
    labelNames: [...spec.labelNames],
    registers: [registry],
  });
  return {
    name: spec.name,
    inc: (...args) => {
      const { labels, rest } = split(args);
      const value = numberArg(rest) ?? 1;
      if (labels === undefined) metric.inc(value);
      else metric.inc(labels, value);
    },
    remove: (...args) => {
      const { labels } = split(args);
      if (labels !== undefined) metric.remove(labels);
      else metric.reset();
    },
    reset: () => metric.reset(),
  };
}

export function gauge<L extends Labels = NoLabels>(
  registry: Registry,
  spec: MetricSpec<L>,
  collect?: (this: Gauge<string>) => void | Promise<void>,
): GaugeHandle<L> {
  const metric = new Gauge<string>({
    name: spec.name,
    help: spec.help,
    labelNames: [...spec.labelNames],
    registers: [registry],
    ...(collect === undefined ? {} : { collect }),
  });
  const change = (op: "set" | "inc" | "dec", args: readonly unknown[]): void => {
    const { labels, rest } = split(args);
    const value = numberArg(rest, op === "set" ? undefined : 1);
    if (value === undefined) throw new TypeError(`${spec.name}: ${op} needs a value`);
    if (labels === undefined) metric[op](value);
    else metric[op](labels, value);
  };
  return {
    name: spec.name,
    set: (...args) => change("set", args),
    inc: (...args) => change("inc", args),
    dec: (...args) => change("dec", args),
    remove: (...args) => {
      const { labels } = split(args);
      if (labels !== undefined) metric.remove(labels);
      else metric.reset();
    },
    reset: () => metric.reset(),
  };
}

export function histogram<L extends Labels = NoLabels>(
  registry: Registry,
  spec: MetricSpec<L>,
  buckets: readonly number[],
): HistogramHandle<L> {
  const metric = new Histogram<string>({
    name: spec.name,
    help: spec.help,
    labelNames: [...spec.labelNames],
    buckets: [...buckets],
    registers: [registry],
  });
  const observe = (args: readonly unknown[]): void => {
    const { labels, rest } = split(args);
    const seconds = numberArg(rest);
    if (seconds === undefined) throw new TypeError(`${spec.name}: observe needs a value`);
    if (labels === undefined) metric.observe(seconds);
    else metric.observe(labels, seconds);
  };
  return {
    name: spec.name,
    observe: (...args) => observe(args),
    startTimer: () => {
      const started = performance.now();
      return (...args) => {
        const seconds = (performance.now() - started) / 1_000;
        observe([...args, seconds]);
        return seconds;
      };
    },
    zero: (...args) => {
      const { labels } = split(args);
      // An unlabelled histogram's series exists from registration: nothing to create.
      if (labels !== undefined) metric.zero(labels);
    },
    reset: () => metric.reset(),
  };
}
