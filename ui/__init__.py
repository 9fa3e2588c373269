"""Streamlit helpers shared by the pages (kept out of pages/, which Streamlit lists as pages)."""
