// BullMQ ships its Lua scripts' module without declarations beside the CommonJS build: one export per script.
declare module "bullmq/dist/cjs/scripts/index.js" {
  const scripts: Record<string, { readonly name: string; readonly content: string; readonly keys: number }>;
  export = scripts;
}
