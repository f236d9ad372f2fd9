// ESLint (flat config) for the viewer's JavaScript: `npm run lint:js` (part of `make lint`).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "build/", ".venv/"] },
  js.configs.recommended,
  {
    files: ["web/**/*.mjs", "scripts/snapshot/*.mjs"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "no-implicit-globals": "error",
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      eqeqeq: ["error", "always"],
      "prefer-const": "error",
      "no-var": "error",
    },
  },
  {
    files: ["web/worker.mjs", "scripts/snapshot/maker-worker.mjs"],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    files: ["eslint.config.mjs"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
];
