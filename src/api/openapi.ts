/** Builds the OpenAPI 3.1 document from the route declarations. */
import type { z } from 'zod'
import { createDocument } from 'zod-openapi'
import { NODE_VERSION } from '../release/index.js'
import type { AnyRoute } from './route.js'
import { ERROR_CODE_HEADER, STATUS_BY_CODE } from './errors.js'

/** `schemas`: wire objects no route body shows (the real-time messages), listed under components. */
export function openApiDocument (routes: readonly AnyRoute[], schemas: Record<string, z.ZodType> = {}): object {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const responses: Record<string, unknown> = {}
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = {
        description: res.description,
        ...(Number(status) >= 400 ? { headers: { [ERROR_CODE_HEADER]: { $ref: '#/components/headers/ErrorCode' } } } : {}),
        ...(res.schema !== undefined ? { content: { [res.contentType ?? 'application/json']: { schema: res.schema } } } : {})
      }
    }
    paths[r.path] ??= {}
    paths[r.path][r.method] = {
      summary: r.summary,
      ...(r.description !== undefined ? { description: r.description } : {}),
      tags: [r.tag],
      ...(r.params !== undefined || r.query !== undefined
        ? { requestParams: { ...(r.params !== undefined ? { path: r.params } : {}), ...(r.query !== undefined ? { query: r.query } : {}) } }
        : {}),
      ...(r.body !== undefined ? { requestBody: { required: !r.body.safeParse(undefined).success, content: { 'application/json': { schema: r.body } } } } : {}),
      ...(r.write === true ? { security: [{}, { bearer: [] }] } : {}),
      responses
    }
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'kith node',
      version: NODE_VERSION,
      description: 'A node of a permissioned blockchain with an end-to-end encrypted relay mailbox and a social feed. Errors are `{"error": "..."}`, with the kind of failure in the `Kith-Error-Code` header.'
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
      headers: {
        ErrorCode: {
          description: 'The kind of failure, stable across versions (the `error` text is for people): ' +
            Object.entries(STATUS_BY_CODE).map(([code, status]) => `${code} (${status})`).join(', '),
          schema: { type: 'string', enum: Object.keys(STATUS_BY_CODE) }
        }
      }
    },
    paths: paths as Parameters<typeof createDocument>[0]['paths']
  })
}
