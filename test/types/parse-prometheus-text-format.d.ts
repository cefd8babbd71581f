/** Types for parse-prometheus-text-format 1.1 (the package ships none): prom2json-shaped families. */
declare module 'parse-prometheus-text-format' {
  export interface Sample {
    labels?: Record<string, string>
    value?: string
    /** histograms */
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  export interface Family {
    name: string
    help: string
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    metrics: Sample[]
  }
  export default function parsePrometheusTextFormat (text: string): Family[]
}
