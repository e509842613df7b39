"""eerag"""
