"""The teacher's tools: the sandbox, the teachers' box and view, worksheets, reports and exports."""
