import './style.css'
import { render } from 'preact'
import { App } from './app'

const root = document.getElementById('app')!
root.replaceChildren() // the page's "Loading the console…" placeholder: preact would keep it beside the app
render(<App />, root)
