// Vite's `?raw` imports: a file's text (the tests read the stylesheet this way).
declare module "*?raw" {
  const text: string;
  export default text;
}
