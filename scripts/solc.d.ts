// The npm `solc` package ships no type declarations; this covers the one entry point the build uses.
declare module "solc" {
  interface ImportResult {
    contents?: string;
    error?: string;
  }
  interface Solc {
    version(): string;
    /** Standard JSON in, standard JSON out; `import` resolves sources the input does not carry. */
    compile(input: string, callbacks?: { import?: (path: string) => ImportResult }): string;
  }
  const solc: Solc;
  export default solc;
}
