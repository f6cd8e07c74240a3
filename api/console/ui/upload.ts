// A model version's object uploaded from the browser with its progress. It goes to our own origin
// (PUT /v1/model-versions/{id}/object-content), which streams it on to the tenant's bucket: the storage endpoint is
// another origin, outside this page's CSP (connect-src 'self') and often unreachable from a browser at all.
// XMLHttpRequest, not fetch: only it reports upload progress.
import { csrf } from './api'
import { Problem } from './problem'

export interface Progress {
  sent: number
  total: number
}

export function uploadObject(versionId: string, key: string, file: Blob, onProgress: (p: Progress) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('PUT', `/v1/model-versions/${encodeURIComponent(versionId)}/object-content?key=${encodeURIComponent(key)}`)
    xhr.withCredentials = true
    xhr.setRequestHeader('content-type', 'application/octet-stream')
    xhr.setRequestHeader('accept', 'application/json')
    const token = csrf.get()
    if (token) xhr.setRequestHeader('x-csrf-token', token)
    xhr.upload.onprogress = (e) => onProgress({ sent: e.loaded, total: e.lengthComputable ? e.total : file.size })
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress({ sent: file.size, total: file.size })
        return resolve()
      }
      let body: unknown = null
      try {
        body = JSON.parse(xhr.responseText)
      } catch {
        /* not a problem body: the status says it */
      }
      reject(Problem.from(body, new Response(null, { status: xhr.status, statusText: xhr.statusText })))
    }
    xhr.onerror = () => reject(new Problem({ status: 0, code: 'NETWORK', message: 'The upload was cut off. Check the connection and try again.' }))
    xhr.send(file)
  })
}
