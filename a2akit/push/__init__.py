"""Push notifications: the webhook guard (`guard`, imported by the front door), the HTTP
sender (`sender`, httpx), and the dispatcher that sends each stored event to the task's
webhooks (`dispatcher`), fed in process (`inline`) or by the table's stream (`stream`)."""
