import * as v from "valibot";
import { ERROR_CODES, type ErrorCode } from "../lib/errors";

/** The body of every error answer (contract section 8); the TypeScript type derives from it. */
export const ProblemSchema = v.pipe(
  v.object({
    type: v.string(),
    title: v.string(),
    status: v.number(),
    detail: v.string(),
    code: v.picklist(Object.keys(ERROR_CODES) as ErrorCode[]),
    requestId: v.string(),
    errors: v.array(
      v.object({
        path: v.pipe(
          v.string(),
          v.description("Pointer to the offending parameter, e.g. `filters/2/operator`."),
        ),
        message: v.string(),
      }),
    ),
    error: v.pipe(v.string(), v.description("Same as `title` (OpenPanel compatibility).")),
    message: v.pipe(v.string(), v.description("Same as `detail` (OpenPanel compatibility).")),
    profileId: v.optional(
      v.pipe(v.string(), v.description("Only on `Profile not found`: the profile asked for.")),
    ),
  }),
  v.metadata({ ref: "Problem" }),
  v.description("RFC 9457 problem details."),
);

export type ProblemDocument = v.InferOutput<typeof ProblemSchema>;
